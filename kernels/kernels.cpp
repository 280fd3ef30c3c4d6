// Anchor for the kernels library until the first kernel family lands.
namespace offloadbench {}
