"""Hugging Face Hub datasets as inputs: `hf://datasets/OWNER/NAME[@REVISION][/FOLDER]` names a dataset repository
(the Hub's own URL scheme). Its parquet and arrow files, and nothing else, are fetched into the Hugging Face cache
by huggingface_hub (resumable, shared with `datasets`, HF_HUB_CACHE and HF_TOKEN as usual) and read from there
like a local folder, row by row. Offline (HF_HUB_OFFLINE=1, or no network) the cached copy is used; a dataset the
cache lacks is an error that says so."""

from trajforge.schemas.storage import StorageError

PREFIX = "hf://datasets/"
FORM = "hf://datasets/OWNER/NAME[@REVISION][/FOLDER]"


def is_hub(path: str) -> bool:
    return str(path).startswith(PREFIX)


def local_folder(url: str) -> str:
    """The local folder holding `url`'s data files (its FOLDER within the repository, when given)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    owner, _, rest = url[len(PREFIX) :].partition("/")
    name, _, folder = rest.partition("/")
    name, _, revision = name.partition("@")
    if not owner or not name:
        raise StorageError(f"{url}: a Hub dataset is named {FORM}")
    within = f"{folder.strip('/')}/" if folder.strip("/") else ""
    patterns = [f"{within}*.parquet", f"{within}*.arrow"]
    try:
        snapshot = snapshot_download(f"{owner}/{name}", repo_type="dataset", revision=revision or None,
                                     allow_patterns=patterns)  # fmt: skip
    except LocalEntryNotFoundError as exc:
        raise StorageError(f"{url}: not in the Hugging Face cache, and the Hub cannot be reached ({exc})") from exc
    except (HfHubHTTPError, OSError) as exc:
        raise StorageError(f"{url}: {exc}") from exc
    return f"{snapshot}/{within}".rstrip("/")
