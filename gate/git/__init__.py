"""Git as the gate reads it: safe git calls, refs, what changed, blobs, search."""
