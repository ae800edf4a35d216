"""Word pools the families draw names and contents from: lowercase ASCII letters only, so a shell's `sort`,
`grep` and `sed` treat them as Python does."""

# fmt: off
WORDS = (
    "apple", "river", "stone", "cloud", "tiger", "maple", "ocean", "pepper", "violet", "harbor", "candle", "forest",
    "garden", "silver", "planet", "window", "rocket", "meadow", "copper", "falcon", "lemon", "marble", "needle",
    "orange", "pillow", "quartz", "saddle", "tunnel", "velvet", "walnut", "yellow", "zephyr", "anchor", "bridge",
    "cactus", "dragon", "engine", "fabric", "glacier", "hammer", "island", "jungle", "kettle", "ladder", "mirror",
    "nickel", "oyster", "parrot", "quiver", "ribbon", "salmon", "timber", "umbrella", "valley", "wizard", "yogurt",
    "badger", "cobalt", "desert", "ember", "feather", "ginger", "hollow", "indigo", "jasper", "kernel", "lantern",
    "mango", "nutmeg", "olive", "pebble", "quill", "raven", "spruce", "thistle", "urchin", "vapor", "willow",
    "almond", "beacon", "cedar", "dune", "echo", "fern", "grove", "heron", "iris", "juniper", "koala", "lotus",
    "moss", "nectar", "orchid", "plum", "reef", "sage", "tulip", "vine", "wren", "bison", "crane", "delta", "flint",
    "gull", "hazel", "ivory", "jade", "kelp", "lynx", "mint", "nova", "opal", "pine", "rust", "slate", "thorn",
)
STEMS = (
    "notes", "data", "words", "items", "records", "entries", "inventory", "names", "values", "list", "input",
    "report", "catalog", "batch", "sample", "journal", "ledger", "roster", "stock", "queue",
)
DIRS = ("data", "input", "docs", "files", "work", "src", "logs", "archive")
EXTENSIONS = ("md", "py", "csv", "log", "json", "cfg")
OUT_NAMES = ("answer.txt", "result.txt", "output.txt", "out.txt", "solution.txt", "final.txt")
# fmt: on
