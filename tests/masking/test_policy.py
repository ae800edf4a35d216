import copy
import pickle

import pytest
import yaml

from trajforge.masking.policy import POLICY_DIR, PolicyError, bundled_policies, load_policy, parse_policy
from trajforge.masking.statistics import TurnStatistics, turn_statistics

PAPER = yaml.safe_load((POLICY_DIR / "paper.yaml").read_text())

# One hand-made (action, observation) pair per category of Table 3, with the statistics that put it there.
TABLE_3 = {
    # Wa = Wo = {git, status}: OL 1, Nov 0.
    "echo": ("git status", "git status"),
    # Wa = {rm, r, old, data}, Wo = {rm, cannot, remove, old, data}: OL 0.75, Nov 0.4.
    "boilerplate": ("rm -r old data", "rm: cannot remove old data"),
    # Wa = {python3, c, print, sorted, pear, apple}, Wo = {apple, pear}: OL 1/3, Nov 0, R < 1.
    "transform": ('python3 -c \'print(sorted(["pear", "apple"]))\'', "['apple', 'pear']"),
    # Wa = {man, ls}, Wo = {ls, list, directory, ...}: OL 0.5, Nov 8/9, R 11.
    "expansion": ("man ls", "ls - list directory contents, ls lists information about the files"),
    # OL 0, Nov 1, R 2.
    "retrieval": ("cat notes.txt", "buy milk and eggs tomorrow"),
    # OL 0, Nov 1, R 9/13.
    "action": ("cat notes.txt", "milk eggs"),
    # Wa = {ls, a, d}, Wo = {d, x}: OL 1/3, Nov 0.5, R 11/7, and short (11 chars).
    "action (short)": ("ls -a d", "d        x"),
    # The same words, 42 characters: not short.
    "other": ("ls -a d", "d" + " " * 40 + "x"),
}
KEEP = {"echo": 0.05, "boilerplate": 0.1, "transform": 0.5}


def test_bundled_policies():
    assert bundled_policies() == ["information", "paper"]
    paper = load_policy("paper")
    assert paper.name == "paper" and paper.config.keep_mode == "turn_sampling"
    assert [rule.category for rule in paper.config.rules] == [
        "echo",
        "boilerplate",
        "transform",
        "expansion",
        "retrieval",
        "action",
        "other",
    ]
    assert not paper.needs_compression_gain and not paper.needs_predictability
    information = load_policy("information")
    assert information.needs_compression_gain and information.needs_predictability


@pytest.mark.parametrize("label", TABLE_3)
def test_every_category_of_table_3_is_reachable(label):
    action, observation = TABLE_3[label]
    category = label.split(" ")[0]
    assert load_policy("paper").classify(turn_statistics(action, observation)) == (category, KEEP.get(category, 1.0))


def test_short_is_a_threshold_in_characters():
    config = copy.deepcopy(PAPER)
    config["short_chars"] = 5
    assert parse_policy(config).classify(turn_statistics(*TABLE_3["action (short)"]))[0] == "other"
    config["short_chars"] = 42
    assert parse_policy(config).classify(turn_statistics(*TABLE_3["other"]))[0] == "action"


def test_precedence_is_the_order_of_the_rules():
    config = copy.deepcopy(PAPER)
    echo, boilerplate = config["rules"][0], config["rules"][1]
    config["rules"][0], config["rules"][1] = boilerplate, echo
    # An echo also has the boilerplate signature; whichever rule comes first wins.
    assert parse_policy(config).classify(turn_statistics(*TABLE_3["echo"])) == ("boilerplate", 0.1)


def test_comparisons_on_statistics_not_computed_are_false():
    policy = load_policy("information")
    plain = TurnStatistics(0, 0, 0, 0, 0, 0)
    assert policy.classify(plain) == ("novel", 1.0)
    assert policy.classify(TurnStatistics(0, 0, 0, 0, 0, 0, predictability=0.9)) == ("predictable", 0.05)
    assert policy.classify(TurnStatistics(0, 0, 0, 0, 0, 0, compression_gain=0.6)) == ("compressible", 0.5)


def test_load_by_path_and_config_hash(tmp_path):
    path = tmp_path / "mine.yaml"
    relabelled = {**PAPER, "name": "mine", "description": "the same rules"}
    # Key order, flow style and comments do not change the hash, nor do the labels; thresholds do.
    path.write_text("# mine\n" + yaml.safe_dump(dict(reversed(relabelled.items())), default_flow_style=True))
    assert load_policy(path).config_hash == load_policy("paper").config_hash == load_policy("paper").config_hash
    changed = copy.deepcopy(PAPER)
    changed["rules"][0]["when"][0]["value"] = 0.71
    assert parse_policy(changed).config_hash != load_policy("paper").config_hash
    changed = {**PAPER, "seed": 1}
    assert parse_policy(changed).config_hash != load_policy("paper").config_hash


def test_policies_pickle():
    policy = load_policy("paper")
    clone = pickle.loads(pickle.dumps(policy))
    assert clone.config_hash == policy.config_hash
    assert clone.classify(turn_statistics(*TABLE_3["echo"])) == ("echo", 0.05)


def _error(data) -> str:
    with pytest.raises(PolicyError) as caught:
        parse_policy(data, origin="bad.yaml")
    return str(caught.value)


def test_config_errors_name_every_problem_with_its_path():
    config = copy.deepcopy(PAPER)
    config["keep_mode"] = "sampling"
    config["rules"][0]["keep"] = 1.5
    config["rules"][0]["when"][0]["stat"] = "overlapp"
    config["rules"][1]["when"][0]["value"] = "0.5"
    config["rules"][5]["when"][1]["any"][0]["op"] = "=>"
    config["thresholds"] = {}
    message = _error(config)
    assert message.startswith("policy bad.yaml is invalid:\n")
    assert "keep_mode: input should be 'turn_sampling' or 'span' (got 'sampling')" in message
    assert "rules[0].keep: input should be less than or equal to 1 (got 1.5)" in message
    assert "rules[0].when[0].stat: input should be 'overlap', 'novelty'," in message
    assert "(got 'overlapp')" in message
    assert "rules[1].when[0].value: input should be a valid number (got '0.5')" in message
    assert "rules[5].when[1].any[0].op: input should be '<', '<=', '>', '>=', '==' or '!=' (got '=>')" in message
    assert "thresholds: extra inputs are not permitted" in message


def test_policy_level_errors():
    assert "the last rule (action) must match every turn: give it `when: []`" in _error(
        {**PAPER, "rules": PAPER["rules"][:-1]}
    )
    assert "categories must be unique, repeated: echo" in _error(
        {**PAPER, "rules": [PAPER["rules"][0], *PAPER["rules"]]}
    )
    assert "rules: list should have at least 1 item" in _error({**PAPER, "rules": []})
    assert "keep_mode: field required" in _error({key: value for key, value in PAPER.items() if key != "keep_mode"})
    assert _error(["not", "a", "mapping"]) == "policy bad.yaml: expected a mapping, got list"


def test_unknown_policies_and_bad_yaml(tmp_path):
    known = "unknown masking policy 'papr'; known: information, paper; nor is it a policy file"
    with pytest.raises(PolicyError, match=known):
        load_policy("papr")
    broken = tmp_path / "broken.yaml"
    broken.write_text("rules: [\n")
    with pytest.raises(PolicyError, match="broken.yaml: not valid YAML"):
        load_policy(broken)
