"""fundbook's build stages: the engine bundle, the published runs, the images
and the site. Each stage is a subpackage with its own command line
(`python -m builders.bundle`, `python -m builders.runs`, ...); the helpers here
(errors, files, the Node/Pyodide seam, provenance) are shared by them and by
launchers/.
"""
