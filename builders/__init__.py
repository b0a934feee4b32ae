"""fundbook's build stages: the engine bundle, the published runs, the images
and the site. Each stage is a subpackage with its own command line
(`python -m builders.bundle`, `python -m builders.runs`, ...); the helpers here
(errors, files, the Node/Pyodide seam, provenance) are shared by them and by
launchers/.
"""

from ._cli import EXIT_USAGE, StageCommand, StageGroup
from ._errors import EXIT_BUILD, BuildError
from ._files import ROOT, rel, replace_dir, sha256_file, staging_dir, write_bytes
from ._node import last_line, node_env, node_executable, pinned_pyodide, popen
from ._provenance import build_part, file_dependency, statement
from ._session import PyodideSession, own_session

__all__ = [
    # the shared helpers (builders/_*.py)
    "EXIT_BUILD",
    "EXIT_USAGE",
    "BuildError",
    "StageCommand",
    "StageGroup",
    "ROOT",
    "rel",
    "replace_dir",
    "sha256_file",
    "staging_dir",
    "write_bytes",
    "last_line",
    "node_env",
    "node_executable",
    "pinned_pyodide",
    "popen",
    "build_part",
    "file_dependency",
    "statement",
    "PyodideSession",
    "own_session",
    # the stages and the record formats, imported by name (`from builders import counting`)
    "bundle",
    "counting",
    "desk",
    "inspect_format",
    "inspect_records",
    "og",
    "practitioners",
    "preregistration",
    "run_index",
    "runs",
    "site",
]
