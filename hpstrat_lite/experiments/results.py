"""The row store, :mod:`hpstrat_lite.rows`, under the name the notebooks import it by."""
from ..rows import (REPO, RESULTS_DIR, append_rows, check_protocol, code_version, default_results_dir,  # noqa: F401
                    model_name, read_rows, resolve_path, with_model_names, write_rows_atomic)
