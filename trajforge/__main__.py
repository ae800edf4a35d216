"""`python -m trajforge ...` and `torchrun -m trajforge ...`: the same CLI as the `trajforge` command."""

from trajforge.pipelines.cli import main

if __name__ == "__main__":
    main()
