"""trajforge: agent trajectory corpora for language world models, and the models trained on them.

The subpackages (`trajforge.schemas`, `trajforge.collectors`, ... `trajforge.pipelines`) live at the repository's
top level, where the product brief puts them; an install maps them under this package, so nothing but `trajforge`
lands at the top level of site-packages.
"""

from pathlib import Path

__version__ = "0.1.0"

# Run from a source checkout (PYTHONPATH=<checkout>: the mutation check's copies, Beam workers, a git worktree)
# rather than an install, the subpackages are this folder's siblings; an installed copy holds them inside.
_checkout = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "schemas").is_dir() and (_checkout / "schemas" / "__init__.py").is_file():
    __path__.append(str(_checkout))
