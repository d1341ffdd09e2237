"""The background worker: one loop (`salesplan worker`, or in-process in the embedded default)
that runs every domain's job kinds. A domain adds a job kind in `salesplan.worker.kinds`."""
