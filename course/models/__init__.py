"""Course models of hardware beyond one SM, not part of the CUDA simulator: a weight-stationary systolic
array (`systolic`), a tiled kernel as a pipeline of stages (`pipeline`), and their pictures (`pictures`).
Nothing in gpusim's core imports them."""
