"""The shapes of records as other projects write them: checked, normalised and read back.

No module here loads a model: the record model reads its turns through `turns`."""
