"""The host-side package cache of isolated MCP servers: what npx runs, installs done once under a lock."""

import threading

import pytest

from trajforge.sandboxes.server_packages import PackageCache, npx_package


@pytest.mark.parametrize(
    "command,args,package",
    [
        ("npx", ("-y", "@modelcontextprotocol/server-filesystem", "/work"), "@modelcontextprotocol/server-filesystem"),
        ("/usr/bin/npx", ("--yes", "pkg@1.2.3"), "pkg@1.2.3"),
        ("npx", ("--package=@scope/tool", "tool-bin", "--flag"), "@scope/tool"),
        ("npx", ("-p", "a-pkg", "a-bin"), "a-pkg"),
        ("npx", ("-y", "--", "after-dashes"), "after-dashes"),
        ("node", ("server.js",), None),
        ("npx", ("-y",), None),
    ],
)
def test_the_package_npx_runs(command, args, package):
    assert npx_package(command, args) == package


def test_an_install_runs_once_across_threads_and_a_failed_one_is_redone(tmp_path):
    cache = PackageCache(tmp_path)
    calls = []

    def install():
        calls.append(1)

    threads = [threading.Thread(target=cache._install_once, args=("npm:x", install)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and cache.ready("npm:x")

    def broken():
        raise RuntimeError("registry down")

    with pytest.raises(RuntimeError):
        cache._install_once("npm:y", broken)
    assert not cache.ready("npm:y")  # no stamp: the next run tries again
    cache._install_once("npm:y", install)
    assert cache.ready("npm:y") and len(calls) == 2
