"""Pure corpus-curation steps on trajectory records: normalisation, the paper's filters, deduplication,
secret redaction. No Beam here: pipelines/build_corpus wraps each step in a labelled PTransform."""
