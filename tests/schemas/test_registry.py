import sys
import threading

import pytest

from trajforge.schemas.registry import Registry, UnknownName, unknown_message


def test_entries_register_by_decorator_or_add_and_are_read_in_registration_order():
    shapes = Registry("shape", name_of=lambda cls: cls.name)

    @shapes.register()
    class Square:
        name = "square"

    @shapes.register("disc", help="a round one")
    class Circle:
        name = "circle"

    shapes.add("dot", object, help="no size")
    assert shapes.names() == list(shapes) == ["square", "disc", "dot"]
    assert shapes.get("square") is Square and shapes.get("disc") is Circle
    assert "disc" in shapes and "circle" not in shapes and len(shapes) == 3
    assert shapes.items()[0] == ("square", Square)
    assert shapes.help("disc") == "a round one" and shapes.help("square") == ""
    assert shapes.describe(" or ") == "square or disc (a round one) or dot (no size)"


def test_an_unknown_name_is_refused_listing_the_known_ones():
    judges = Registry("judge")
    judges.add("embedded", object)
    judges.add("endpoint", object)
    with pytest.raises(UnknownName, match=r"^unknown judge 'llm'; known: embedded, endpoint$"):
        judges.get("llm")
    with pytest.raises(ValueError, match=r"^unknown judge 'a', 'b'; known: embedded, endpoint$"):
        judges.check(["b", "embedded", "a"])
    judges.check(["endpoint"])
    with pytest.raises(UnknownName, match="unknown judge 'llm'"):
        judges.help("llm")
    assert unknown_message("thing", ["x"], []) == "unknown thing 'x'; known: none"


def test_a_name_registered_twice_or_without_a_name_is_refused():
    things = Registry("thing")
    things.add("a", 1)
    with pytest.raises(ValueError, match="thing 'a' is registered twice"):
        things.add("a", 2)
    with pytest.raises(TypeError, match="registering a thing needs a name"):
        things.register()(object)


@pytest.fixture
def plugs(tmp_path, monkeypatch):
    """A package `plugs` on sys.path whose registry PLUGS takes its modules as plug-ins; yields its folder."""
    package = tmp_path / "plugs"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from trajforge.schemas.registry import Registry\nPLUGS = Registry('plug', package=__name__)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield package
    for name in [m for m in sys.modules if m == "plugs" or m.startswith("plugs.")]:
        del sys.modules[name]


def test_a_package_of_plug_ins_is_imported_once_when_first_read(plugs):
    (plugs / "alpha.py").write_text("from plugs import PLUGS\nPLUGS.add('alpha', 1)\n")
    # A module that reads the registry while it is being imported sees what is registered so far, no recursion.
    (plugs / "beta.py").write_text("from plugs import PLUGS\nSEEN = PLUGS.names()\nPLUGS.add('beta', 2)\n")
    (plugs / "helpers.py").write_text("HELPER = True\n")  # a module that registers nothing is just imported
    from plugs import PLUGS

    assert "plugs.alpha" not in sys.modules
    assert PLUGS.names() == ["alpha", "beta"] and PLUGS.get("beta") == 2
    assert sys.modules["plugs.beta"].SEEN == ["alpha"] and "plugs.helpers" in sys.modules
    (plugs / "gamma.py").write_text("from plugs import PLUGS\nPLUGS.add('gamma', 3)\n")
    assert PLUGS.names() == ["alpha", "beta"]  # imported once: no second scan


def test_a_packages_plug_ins_are_read_in_name_order_whichever_was_imported_first(plugs):
    (plugs / "alpha.py").write_text("from plugs import PLUGS\nPLUGS.add('alpha', 1)\n")
    (plugs / "beta.py").write_text("from plugs import PLUGS\nPLUGS.add('beta', 2)\n")
    import plugs.beta  # noqa: F401  (registers beta before the registry's first read imports alpha)
    from plugs import PLUGS

    assert PLUGS.names() == ["alpha", "beta"]
    with pytest.raises(UnknownName, match=r"^unknown plug 'nope'; known: alpha, beta$"):
        PLUGS.get("nope")


def test_a_plug_in_module_that_fails_to_import_fails_every_read_until_it_imports(plugs):
    (plugs / "alpha.py").write_text("import no_such_module_here\n")
    from plugs import PLUGS

    for _ in range(2):
        with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
            PLUGS.names()
    (plugs / "alpha.py").write_text("from plugs import PLUGS\nPLUGS.add('alpha', 1)\n")
    assert PLUGS.names() == ["alpha"]


def test_threads_reading_a_registry_first_all_wait_for_every_plug_in(plugs):
    (plugs / "alpha.py").write_text("import time\nfrom plugs import PLUGS\ntime.sleep(0.3)\nPLUGS.add('alpha', 1)\n")
    (plugs / "beta.py").write_text("from plugs import PLUGS\nPLUGS.add('beta', 2)\n")
    from plugs import PLUGS

    seen: list[list[str]] = []
    threads = [threading.Thread(target=lambda: seen.append(PLUGS.names())) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen == [["alpha", "beta"]] * 4


@pytest.fixture
def above(plugs):
    """Modules beside the package `plugs` (a layer above it) that register into PLUGS when imported."""
    (plugs.parent / "plugs_above.py").write_text("from plugs import PLUGS\nPLUGS.add('above', 3, help='from above')\n")
    (plugs.parent / "plugs_other.py").write_text("from plugs import PLUGS\nPLUGS.add('other', 4)\n")
    (plugs.parent / "plugs_silent.py").write_text("HELPER = True\n")
    yield
    for name in ("plugs_above", "plugs_other", "plugs_silent"):
        sys.modules.pop(name, None)


def test_a_name_provided_by_a_module_imports_that_module_when_read(plugs, above):
    (plugs / "alpha.py").write_text("from plugs import PLUGS\nPLUGS.add('alpha', 1)\n")
    from plugs import PLUGS

    PLUGS.provided_by("above", "plugs_above")
    PLUGS.provided_by("other", "plugs_other")
    assert "plugs_above" not in sys.modules
    assert PLUGS.get("above") == 3 and "above" in PLUGS
    assert "plugs_other" not in sys.modules  # only the provider of the name read
    assert PLUGS.describe(", ") == "alpha, above (from above), other"  # listing imports every provider
    with pytest.raises(ValueError, match="plug 'above' is declared twice"):
        PLUGS.provided_by("above", "plugs_other")


def test_a_provider_that_does_not_register_its_name_fails_the_read(plugs, above):
    from plugs import PLUGS

    PLUGS.provided_by("silent", "plugs_silent")
    with pytest.raises(ImportError, match="plugs_silent does not register the plug 'silent'"):
        PLUGS.get("silent")
