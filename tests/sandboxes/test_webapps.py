"""Each bundled web app registers its `build()`; each build is a fresh app (fresh state)."""

import pytest
from starlette.testclient import TestClient

from trajforge.sandboxes.webapps import WEB_APPS, build_app


def test_every_bundled_app_is_registered_and_serves_its_home_page():
    assert WEB_APPS.names() == ["shop", "wiki", "wizard"]
    for name in WEB_APPS:
        assert build_app(name) is not build_app(name)
        assert TestClient(build_app(name)).get("/").status_code == 200


def test_an_unknown_app_is_refused_listing_the_bundled_ones():
    with pytest.raises(ValueError, match="^unknown web app 'moon'; known: shop, wiki, wizard$"):
        build_app("moon")
