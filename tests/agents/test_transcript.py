"""An episode's tokens as generated: the context grows by deltas, earlier answers are never re-tokenized."""

from trajforge.agents.layout import agent_messages
from trajforge.agents.transcript import Transcript
from trajforge.training.chat_format import ChatFormat, Message
from trajforge.training.labels import label_document
from trajforge.training.tokenizer import load_tokenizer


def test_the_context_is_the_generated_ids_plus_the_rendered_deltas(tiny_agent):
    tokenizer = load_tokenizer(tiny_agent)
    chat = ChatFormat.of(tokenizer)
    transcript = Transcript(agent_messages("count", [{"name": "shell"}], "notes.txt"), tokenizer, chat)
    text = "```bash\nwc -l notes.txt\n```"
    # ids a model could have written for the text that its tokenizer would never produce: one byte at a time
    generated = [tokenizer.convert_tokens_to_ids(t) for t in tokenizer.tokenize(text)[:1]]
    generated += [i for ch in text[len(tokenizer.decode(generated)) :] for i in tokenizer(ch)["input_ids"]]
    generated.append(tokenizer.convert_tokens_to_ids(chat.end_of_turn))
    assert tokenizer(text)["input_ids"] != generated[:-1] and tokenizer.decode(generated[:-1]) == text
    transcript.add_action(generated, text, stopped=True)
    delta = transcript.add_observation("5 notes.txt <|end|>")
    ids, mask = transcript.stream()
    first = transcript.turns[0].prompt_ids
    assert ids.tolist() == first + generated + delta  # the generated ids kept as they were
    assert mask.tolist() == [0] * len(first) + [1] * len(generated) + [0] * len(delta)
    # the delta is what the chat format adds: the whole conversation rendered and tokenized, minus the answer
    whole = label_document(chat.prompt(Message.all_of(transcript.messages)), tokenizer).input_ids.tolist()
    answer = tokenizer(text)["input_ids"] + [generated[-1]]
    assert whole == first + answer + delta
    assert tokenizer.decode(delta) == "\n<|user|>5 notes.txt <|end|><|end|>\n<|assistant|>"
    assert "<|end|>" in tokenizer.decode(delta, skip_special_tokens=True)  # the observation's text, not a marker


def test_an_answer_cut_by_the_token_limit_gets_the_turns_end_from_the_template(tiny_agent):
    tokenizer = load_tokenizer(tiny_agent)
    chat = ChatFormat.of(tokenizer)
    transcript = Transcript(agent_messages("count", [], "x"), tokenizer, chat)
    transcript.add_action(tokenizer("```bash")["input_ids"], "```bash", stopped=False)
    assert tokenizer.decode(transcript.add_observation("ok")).startswith("<|end|>\n<|user|>ok")
