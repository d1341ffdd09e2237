"""The worker's composition root: which job kinds run (`kinds.py`), the loop that runs them
(`loop.py`: `salesplan worker`, or in-process in the embedded default) and the pruning kinds.
What a job kind itself receives and uses (`WorkerContext`, claims, `JobDue`) is
`salesplan.worker`, below every domain; this package sits above them all, beside `app.py`."""
