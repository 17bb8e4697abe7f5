// A stream attribute whose meaning gpurace does not model (memory synchronisation domains change what a
// fence orders) stops the program, naming the call, the attribute and the line.
// @stdout before
// @exit 2
// @expect_error stream_attribute_refused.cu:14: cudaStreamSetAttribute with the stream attribute cudaLaunchAttributeMemSyncDomain is not supported
#include <cstdio>

int main() {
    printf("before\n");
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaStreamAttrValue value = {};
    value.memSyncDomain = cudaLaunchMemSyncDomainRemote;
    cudaStreamSetAttribute(s, cudaStreamAttributeMemSyncDomain, &value);
    printf("after\n");
    return 0;
}
