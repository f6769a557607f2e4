"""The row store, :mod:`hpstrat_lite.rows`, under the name the notebooks import it by."""
from ..rows import (append_rows, check_protocol, code_version, model_name, read_rows, results_dir,  # noqa: F401
                    with_model_names, write_rows_atomic)
