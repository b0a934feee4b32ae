"""build-og: one Open Graph PNG card per page and per run, drawn locally."""
