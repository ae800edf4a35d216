"""The batch jobs (Beam pipelines built from small labelled PTransforms) and the `trajforge` CLI."""
