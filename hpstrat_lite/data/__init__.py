"""Stage 1: graphs. Dataset loaders (raw files -> undirected simple PyG ``Data``) and synthetic benchmarks."""
