"""Client-side reports built from a finished job's status document, events and metric points."""
