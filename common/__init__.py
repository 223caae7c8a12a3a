"""What the testbed and the analysis both need: the run's stages, the stability criteria and
the scale model. A leaf: it imports neither, so the layers run one way (testbed and
analysis depend on it, the front end mwlab on all three)."""
