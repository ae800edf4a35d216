"""The one way a plug-in registers: a `Registry` maps a name to an entry (a class or a factory), filled by a
decorator (`@REGISTRY.register()`) or `add`, read in registration order (the list --help prints), and looked up
with an error that lists the known names. Where a package's plug-ins are its modules, the registry imports them
all, once, the first time it is read, so adding a plug-in is one module; their entries are then read in name order,
whichever module something imported first. A plug-in from a layer above the
registry's (one that loads a model, in `trajforge.agents`) is declared beside the registry by its module's name
(`provided_by`): reading that name imports the module then, so no import points up and none is needed for its side
effect."""

import importlib
import pkgutil
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownName(ValueError):
    """A name that no plug-in of a registry has; the message lists the known ones."""


def unknown_message(what: str, names: Iterable[str], known: Iterable[str]) -> str:
    """`unknown judge 'llm'; known: embedded, endpoint`: the one wording of every unknown-name error."""
    return f"unknown {what} {', '.join(repr(n) for n in names)}; known: {', '.join(known) or 'none'}"


class Registry(Generic[T]):
    """Plug-ins of one kind. `what` names the kind in errors ("judge", "bundled MCP server"); `name_of` gives an
    entry's name when `register()` is not told one; `package` is the package whose modules are the plug-ins."""

    def __init__(self, what: str, name_of: Callable[[T], str] | None = None, package: str | None = None):
        self.what = what
        self._name_of = name_of
        self._package = package
        self._ready = package is None  # every plug-in module imported
        self._importing = False
        self._lock = threading.RLock()
        self._entries: dict[str, T] = {}
        self._help: dict[str, str] = {}
        self._providers: dict[str, str] = {}  # name -> the module that registers it when imported
        self._providing: set[str] = set()  # those modules being imported now

    def provided_by(self, name: str, module: str) -> None:
        """Declare that importing `module` registers `name`: reading the name, or listing the names, imports it."""
        if name in self._providers:
            raise ValueError(f"{self.what} {name!r} is declared twice")
        self._providers[name] = module

    def add(self, name: str, entry: T, help: str = "") -> T:
        if name in self._entries:
            raise ValueError(f"{self.what} {name!r} is registered twice")
        self._entries[name] = entry
        self._help[name] = help
        return entry

    def register(self, name: str | None = None, help: str = "") -> Callable[[T], T]:
        """A decorator that registers what it decorates, under `name` or the name `name_of` gives it."""

        def decorate(entry: T) -> T:
            if name is None and self._name_of is None:
                raise TypeError(f"registering a {self.what} needs a name")
            return self.add(name if name is not None else self._name_of(entry), entry, help)

        return decorate

    def get(self, name: str) -> T:
        """The entry registered as `name`; UnknownName (a ValueError) lists the known names."""
        entries = self._loaded([name])
        if name not in entries:
            raise UnknownName(unknown_message(self.what, [name], self._loaded()))
        return entries[name]

    def check(self, names: Iterable[str]) -> None:
        """Refuse, in one error, every name of `names` that is not registered."""
        unknown = sorted(set(names) - set(self._loaded()))
        if unknown:
            raise UnknownName(unknown_message(self.what, unknown, self._loaded()))

    def help(self, name: str) -> str:
        """What `name` is, one line, as it was registered (empty when it was registered without)."""
        self.get(name)
        return self._help[name]

    def describe(self, joiner: str) -> str:
        """`name (help)` for every entry, joined: the choices as a command's --help lists them."""
        return joiner.join(f"{name} ({self._help[name]})" if self._help[name] else name for name in self)

    def names(self) -> list[str]:
        return list(self._loaded())

    def items(self) -> list[tuple[str, T]]:
        return list(self._loaded().items())

    def __contains__(self, name: object) -> bool:
        return name in self._loaded([name])

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._loaded())

    def _loaded(self, names: Iterable[object] | None = None) -> dict[str, T]:
        """The entries, once every plug-in module is imported and the providers of `names` (None: of every declared
        name) too."""
        self._import_package()
        with self._lock:
            wanted = self._providers if names is None else [name for name in names if name in self._providers]
            for name in wanted:
                module = self._providers[name]
                if name in self._entries or module in self._providing:
                    continue  # registered, or its module reads the registry while it is imported
                self._providing.add(module)
                try:
                    importlib.import_module(module)
                finally:
                    self._providing.discard(module)
                if name not in self._entries:
                    raise ImportError(f"{module} does not register the {self.what} {name!r}")
        return self._entries

    def _import_package(self) -> None:
        if not self._ready:
            # Another thread waits here until every module is imported (a half-filled registry would read as
            # missing plug-ins); a module of the package that reads the registry while it is imported (same
            # thread) sees what is registered so far.
            with self._lock:
                if not self._ready and not self._importing:
                    self._importing = True
                    try:
                        _import_modules(self._package)  # a module that fails is tried again at the next read
                        self._entries = dict(sorted(self._entries.items()))
                        self._ready = True
                    finally:
                        self._importing = False


def _import_modules(package: str) -> None:
    """Import every module of `package` (each registers its plug-ins as it is imported)."""
    for module in pkgutil.iter_modules(importlib.import_module(package).__path__):
        importlib.import_module(f"{package}.{module.name}")
