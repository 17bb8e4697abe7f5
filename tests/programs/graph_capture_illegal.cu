// Calls that stream capture does not allow return the error NVIDIA's runtime returns and invalidate the
// capture: later work on the stream fails with cudaErrorStreamCaptureInvalidated, and cudaStreamEndCapture
// ends the capture with that error and no graph. Nothing captured runs, nor does the refused work. The
// legacy stream cannot capture, nor be used while a blocking stream (one created without
// cudaStreamNonBlocking) captures; cudaMalloc is unsafe during a capture; in the relaxed mode a synchronous
// copy during a capture is allowed.
// @stdout legacy: cudaErrorStreamCaptureUnsupported
// @stdout synchronize: cudaErrorStreamCaptureUnsupported, status 2
// @stdout launch after: cudaErrorStreamCaptureInvalidated
// @stdout end: cudaErrorStreamCaptureInvalidated, graph 0
// @stdout memcpy: cudaErrorStreamCaptureUnsupported
// @stdout end: cudaErrorStreamCaptureInvalidated, graph 0
// @stdout legacy launch: cudaErrorStreamCaptureImplicit
// @stdout end: cudaErrorStreamCaptureInvalidated, graph 0
// @stdout malloc: cudaErrorStreamCaptureUnsupported
// @stdout end: cudaErrorStreamCaptureInvalidated, graph 0
// @stdout relaxed memcpy: cudaSuccess
// @stdout end: cudaSuccess, graph 1
// @stdout x[0] = 7
// @exit 0
// @expect clean
#include <cstdio>

__global__ void bump(int *x) { x[threadIdx.x] += 1; }

int main() {
    int *x, host[32];
    for (int i = 0; i < 32; i++) host[i] = 7;
    cudaMalloc(&x, sizeof host);
    cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaGraph_t graph;
    cudaStreamCaptureStatus status;

    printf("legacy: %s\n", cudaGetErrorName(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal)));

    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    bump<<<1, 32, 0, s>>>(x);
    cudaError_t e = cudaStreamSynchronize(s);
    cudaStreamIsCapturing(s, &status);
    printf("synchronize: %s, status %d\n", cudaGetErrorName(e), (int)status);
    bump<<<1, 32, 0, s>>>(x);
    printf("launch after: %s\n", cudaGetErrorName(cudaGetLastError()));
    e = cudaStreamEndCapture(s, &graph);
    printf("end: %s, graph %d\n", cudaGetErrorName(e), graph != nullptr);

    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    bump<<<1, 32, 0, s>>>(x);
    printf("memcpy: %s\n", cudaGetErrorName(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost)));
    e = cudaStreamEndCapture(s, &graph);
    printf("end: %s, graph %d\n", cudaGetErrorName(e), graph != nullptr);

    cudaStream_t blocking;
    cudaStreamCreate(&blocking);
    cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal);
    bump<<<1, 32>>>(x);
    printf("legacy launch: %s\n", cudaGetErrorName(cudaGetLastError()));
    e = cudaStreamEndCapture(blocking, &graph);
    printf("end: %s, graph %d\n", cudaGetErrorName(e), graph != nullptr);

    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    int *y = nullptr;
    printf("malloc: %s\n", cudaGetErrorName(cudaMalloc(&y, 64)));
    e = cudaStreamEndCapture(s, &graph);
    printf("end: %s, graph %d\n", cudaGetErrorName(e), graph != nullptr);

    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    cudaThreadExchangeStreamCaptureMode(&mode);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed);
    bump<<<1, 32, 0, s>>>(x);
    printf("relaxed memcpy: %s\n", cudaGetErrorName(cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost)));
    e = cudaStreamEndCapture(s, &graph);
    cudaThreadExchangeStreamCaptureMode(&mode);
    printf("end: %s, graph %d\n", cudaGetErrorName(e), graph != nullptr);
    printf("x[0] = %d\n", host[0]);

    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    cudaStreamDestroy(blocking);
    cudaFree(x);
    return 0;
}
