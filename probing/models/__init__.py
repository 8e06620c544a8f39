"""Model plumbing: the registry of names and loaders, embedded weights, downloads."""
