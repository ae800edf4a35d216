"""How a conversation becomes text: the tokenizer's own chat template, rendered the way `apply_chat_template` renders
it (transformers' `render_jinja_template`, with the tokenizer's special tokens as template variables).

A real model (SmolLM2, any Hugging Face instruct model) keeps the template it was trained with, and no token is
added. The tiny default model's tokenizer carries MARKER_TEMPLATE, trajforge's own markers, each one special token:

    <|begin|><|system|>{system prompt}<|end|>
    <|user|>{action}<|end|>
    <|assistant|>{observation}<|end|>
    ... one user/assistant pair per turn

A tokenizer without a chat template falls back to these markers (training/tokenizer.py adds them and says so).

Which characters are content: the conversation is rendered once with a sentinel in place of each message's content.
The text between sentinels is the template's own (its special tokens are matched when it is tokenized); each
content goes back where its sentinel was and is tokenized as plain text, so an observation that contains
"<|im_end|>" can never end a turn. A template that rewrites contents (trims them, drops reasoning) is refused when
the format is built: a probe conversation must render exactly as the template renders it.

The end of turn is the special token the template writes right after an assistant message (<|end|>, <|im_end|>,
<|eot_id|>): it is in the loss when a message's loss reaches the message's end (the model learns where an
observation stops where it learns how it ends), and generation stops at it.
"""

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

BEGIN = "<|begin|>"
SYSTEM = "<|system|>"
USER = "<|user|>"
ASSISTANT = "<|assistant|>"
END = "<|end|>"
PAD = "<|pad|>"
CHAT_MARKERS = (BEGIN, SYSTEM, USER, ASSISTANT, END)
SPECIAL_TOKENS = (PAD, *CHAT_MARKERS)
ROLES = ("system", "user", "assistant")
MARKER_TEMPLATE = (
    "{{ '<|begin|>' }}{% for message in messages %}{{ '<|' + message['role'] + '|>' + message['content'] + "
    "'<|end|>\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>' }}{% endif %}"
)

Span = tuple[int, int]
_SENTINEL = "\ue000{}\ue001"  # private-use characters: never in a template, and no template transforms them
_SENTINEL_RE = re.compile("\ue000(\\d+)\ue001")
_PROBE = (("system", " S\n"), ("user", "\tu "), ("assistant", " a\n\n"), ("user", "v"), ("assistant", ""))


@dataclass(frozen=True)
class RenderedDocument:
    text: str
    loss_flags: np.ndarray  # bool, one per character of text
    template_spans: tuple[Span, ...]  # the template's own text: its special tokens are matched, content's never

    def loss_text(self) -> str:
        """The in-loss characters, in order (what the labels must decode to)."""
        return "".join(c for c, in_loss in zip(self.text, self.loss_flags, strict=True) if in_loss)

    def after(self, position: int) -> "RenderedDocument":
        """The document from `position` on: what follows a prefix already tokenized. Cut right after a special token
        (an end of turn), its ids are the whole document's from there, since tokenization splits at special tokens."""
        spans = tuple((max(s, position) - position, e - position) for s, e in self.template_spans if e > position)
        return RenderedDocument(self.text[position:], self.loss_flags[position:], spans)

    def pieces(self) -> Iterator[tuple[int, int, bool]]:
        """(start, end, is_template) runs covering the text, in order."""
        position = 0
        for start, end in self.template_spans:
            if start > position:
                yield position, start, False
            yield start, end, True
            position = end
        if position < len(self.text):
            yield position, len(self.text), False


class DocumentBuilder:
    """Appends content and template text, keeping the loss spans and template positions in step with the text."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.loss_spans: list[Span] = []
        self.template: list[Span] = []

    def text(self, text: str, loss_spans: Iterable[Span] = ()) -> None:
        """Append content; loss_spans are offsets into this text."""
        self.loss_spans.extend((self.length + s, self.length + e) for s, e in loss_spans if e > s)
        self._append(text)

    def template_text(self, text: str, in_loss_prefix: int = 0) -> None:
        """Append the template's own text; its first `in_loss_prefix` characters are in the loss."""
        if text:
            self.template.append((self.length, self.length + len(text)))
        if in_loss_prefix:
            self.loss_spans.append((self.length, self.length + in_loss_prefix))
        self._append(text)

    def _append(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def build(self) -> RenderedDocument:
        flags = np.zeros(self.length, dtype=bool)
        for start, end in self.loss_spans:
            flags[start:end] = True
        return RenderedDocument("".join(self.parts), flags, tuple(self.template))


@dataclass(frozen=True)
class Message:
    role: str  # system, user or assistant
    content: str
    loss_spans: tuple[Span, ...] = ()  # offsets into content
    end_in_loss: bool = False  # the end-of-turn token after it is in the loss

    @classmethod
    def all_of(cls, messages: Iterable[Mapping[str, str]]) -> list["Message"]:
        """Chat messages as dicts ({role, content}, the OpenAI shape shards and requests use), none in the loss."""
        return [cls(m["role"], m["content"]) for m in messages]


class ChatFormat:
    """A chat template with the special tokens it may write. `name` says where it came from (reports, checkpoints)."""

    def __init__(
        self,
        template: str,
        special_tokens: Iterable[str],
        variables: Mapping[str, str] | None = None,
        name: str = "chat template",
    ):
        self.template = template
        self.special_tokens = tuple(sorted({t for t in special_tokens if t}, key=len, reverse=True))
        self.variables = dict(variables or {})
        self.name = name
        probe = [Message(role, content) for role, content in _PROBE]
        if self.document(probe).text != self.render(probe):
            raise ValueError(f"{name}: the template rewrites message contents; trajforge cannot place the loss in it")
        self.end_of_turn = self._end_of_turn()

    @classmethod
    def of(cls, tokenizer) -> "ChatFormat":
        """The tokenizer's chat template (training.tokenizer.load_tokenizer makes sure there is one)."""
        template = tokenizer.chat_template
        if isinstance(template, dict):
            template = template.get("default")
        if not template:
            raise ValueError("the tokenizer has no chat template: load it with training.tokenizer.load_tokenizer")
        specials = [*tokenizer.all_special_tokens, *(t.content for t in tokenizer.added_tokens_decoder.values())]
        variables = {k: v for k, v in tokenizer.special_tokens_map.items() if isinstance(v, str)}
        name = "trajforge markers" if template == MARKER_TEMPLATE else f"chat template of {tokenizer.name_or_path}"
        chat = cls(template, specials, variables, name)
        if chat.end_of_turn is None:
            raise ValueError(f"{name}: no special token follows an assistant message, so generation could not stop")
        return chat

    def render(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> str:
        """The conversation exactly as apply_chat_template(tokenize=False) writes it."""
        from transformers.utils.chat_template_utils import render_jinja_template

        conversation = [{"role": m.role, "content": m.content} for m in messages]
        rendered, _ = render_jinja_template(
            [conversation], chat_template=self.template, add_generation_prompt=add_generation_prompt, **self.variables
        )
        return rendered[0]

    def document(self, messages: Sequence[Message], add_generation_prompt: bool = False) -> RenderedDocument:
        """The conversation as text with its loss flags and where the template's own text is."""
        for message in messages:
            if message.role not in ROLES:
                raise ValueError(f"message role {message.role!r}: expected one of {', '.join(ROLES)}")
        skeleton = self.render(
            [Message(m.role, _SENTINEL.format(i)) for i, m in enumerate(messages)], add_generation_prompt
        )
        doc = DocumentBuilder()
        position, expected, end_in_loss = 0, 0, False
        for match in _SENTINEL_RE.finditer(skeleton):
            if int(match.group(1)) != expected:
                raise ValueError(f"{self.name}: the template drops, repeats or reorders messages")
            self._template_piece(doc, skeleton[position : match.start()], end_in_loss)
            message = messages[expected]
            doc.text(message.content, message.loss_spans)
            end_in_loss = message.end_in_loss
            position, expected = match.end(), expected + 1
        if expected != len(messages):
            raise ValueError(f"{self.name}: the template drops messages ({expected} of {len(messages)} rendered)")
        self._template_piece(doc, skeleton[position:], end_in_loss)
        return doc.build()

    def prompt(self, messages: Sequence[Message]) -> RenderedDocument:
        """The conversation followed by the opening of an assistant message: what a model continues."""
        return self.document(messages, add_generation_prompt=True)

    def _template_piece(self, doc: DocumentBuilder, text: str, end_in_loss: bool) -> None:
        end = getattr(self, "end_of_turn", None)
        in_loss = len(end) if end_in_loss and end and text.startswith(end) else 0
        doc.template_text(text, in_loss)

    def _end_of_turn(self) -> str | None:
        skeleton = self.render([Message(r, _SENTINEL.format(i)) for i, (r, _) in enumerate(_PROBE[:3])])
        after = skeleton.split(_SENTINEL.format(2), 1)[1]
        return next((t for t in self.special_tokens if after.startswith(t)), None)


MARKERS = ChatFormat(MARKER_TEMPLATE, SPECIAL_TOKENS, {"bos_token": BEGIN, "eos_token": END}, "trajforge markers")
