// cudaGraphExecUpdate of a graph with an IF conditional node: graphs built alike, whose body's memset node
// sets another value or whose handle has another default, update the instantiated graph (the body's
// parameters, and the handle's default, are the new graph's); a WHILE node in place of the IF node is a
// parameter no update may change (cudaGraphExecUpdateErrorParametersChanged, naming the new graph's
// conditional node), and a body with one more node a changed topology; a failed update leaves the
// instantiated graph as it was.
// @stdout first: 0x01010101
// @stdout new body: cudaSuccess 0 0x02020202
// @stdout default 0: cudaSuccess 0 0x02020202
// @stdout while: cudaErrorGraphExecUpdateFailure 5 1
// @stdout bigger body: cudaErrorGraphExecUpdateFailure 2
// @stdout after failed updates: 0x07070707
// @exit 0
// @expect clean
#include <cstdio>

// A graph of one conditional node of `type` whose handle defaults to `on`, and whose body sets x's 4 bytes to
// `value` (with `extra` more nodes after it); its conditional node in *node.
static cudaGraph_t build(int *x, unsigned char value, unsigned on, cudaGraphConditionalNodeType type, int extra,
                         cudaGraphNode_t *node) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphConditionalHandle handle;
    cudaGraphConditionalHandleCreate(&handle, g, on, cudaGraphCondAssignDefault);
    cudaGraphNodeParams p = {cudaGraphNodeTypeConditional};
    p.conditional.handle = handle, p.conditional.type = type, p.conditional.size = 1;
    cudaGraphAddNode(node, g, nullptr, nullptr, 0, &p);
    cudaGraph_t body = p.conditional.phGraph_out[0];
    cudaMemsetParams set = {};
    set.dst = x, set.value = value, set.elementSize = 1, set.width = 4, set.height = 1;
    cudaGraphNode_t last;
    cudaGraphAddMemsetNode(&last, body, nullptr, 0, &set);
    for (int i = 0; i < extra; i++) cudaGraphAddEmptyNode(&last, body, &last, 1);
    return g;
}

int main() {
    int *x;
    unsigned h = 0;
    cudaMalloc(&x, sizeof(int));
    cudaGraphNode_t node, bad_node;
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, build(x, 1, 1, cudaGraphCondTypeIf, 0, &node), 0);
    cudaGraphLaunch(exec, 0);
    cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
    printf("first: 0x%08x\n", h);

    cudaGraphExecUpdateResultInfo info;
    cudaError_t e = cudaGraphExecUpdate(exec, build(x, 2, 1, cudaGraphCondTypeIf, 0, &node), &info);
    cudaGraphLaunch(exec, 0);
    cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
    printf("new body: %s %d 0x%08x\n", cudaGetErrorName(e), info.result, h);
    e = cudaGraphExecUpdate(exec, build(x, 3, 0, cudaGraphCondTypeIf, 0, &node), &info);
    cudaGraphLaunch(exec, 0);
    cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
    printf("default 0: %s %d 0x%08x\n", cudaGetErrorName(e), info.result, h);

    e = cudaGraphExecUpdate(exec, build(x, 4, 1, cudaGraphCondTypeWhile, 0, &bad_node), &info);
    printf("while: %s %d %d\n", cudaGetErrorName(e), info.result, info.errorNode == bad_node);
    e = cudaGraphExecUpdate(exec, build(x, 5, 1, cudaGraphCondTypeIf, 1, &bad_node), &info);
    printf("bigger body: %s %d\n", cudaGetErrorName(e), info.result);
    cudaMemset(x, 7, sizeof(int));
    cudaGraphLaunch(exec, 0);
    cudaMemcpy(&h, x, sizeof h, cudaMemcpyDeviceToHost);
    printf("after failed updates: 0x%08x\n", h);
    return 0;
}
