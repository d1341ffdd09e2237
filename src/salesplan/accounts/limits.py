"""The CSV import's batch size, apart from the importer: `salesplan` shows it as the default of
`import … --batch-size` without importing the importer (and with it the models)."""

BATCH_SIZE = 500
