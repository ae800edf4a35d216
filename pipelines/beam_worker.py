"""The worker process of the in-process runner: Beam's own SDK worker, whose logs reach the console only when
the job runs with --verbose (TRAJFORGE_VERBOSE=1). Beam prints start-up INFO and import warnings before any
pipeline option could lower its level, so the filter goes on the handler, before Beam is imported."""

import logging
import os
import sys

VERBOSE_ENV = "TRAJFORGE_VERBOSE"


def main() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setLevel(logging.INFO if os.environ.get(VERBOSE_ENV) == "1" else logging.ERROR)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    logging.getLogger().addHandler(handler)
    from apache_beam.runners.worker import sdk_worker_main

    sdk_worker_main.main(sys.argv)


if __name__ == "__main__":
    main()
