"""What a job kind receives (`context.WorkerContext`) and uses (`claims`, `wake_worker`): below
every domain. The loop and the list of job kinds are the composition root's, `salesplan.jobs`."""
