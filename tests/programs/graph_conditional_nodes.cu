// Conditional graph nodes: an IF node whose condition a kernel node before it sets with
// cudaGraphSetConditional, with an ELSE body; a WHILE node whose body counts down and clears its condition (a
// handle with cudaGraphCondAssignDefault, so every launch starts with the condition set); a SWITCH node with
// three bodies, one of them for no value it gets. Every node is ordered: no findings.
// @stdout if 0: else ran
// @stdout if 1: then ran
// @stdout while: 5 rounds, counter 0
// @stdout while again: 5 rounds, counter 0
// @stdout switch 0: 10
// @stdout switch 1: 11
// @stdout switch 2: 0
// @stdout switch 7: 0
// @exit 0
// @launches 20
// @expect clean
#include <cstdio>

__global__ void decide(const int *in, cudaGraphConditionalHandle handle) { cudaGraphSetConditional(handle, *in); }
__global__ void put(int *out, int value) { *out = value; }
__global__ void count_down(int *counter, int *rounds, cudaGraphConditionalHandle handle) {
    *rounds += 1;
    if (--*counter == 0) cudaGraphSetConditional(handle, 0);
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, void **args) {
    cudaGraphNodeParams p = {cudaGraphNodeTypeKernel};
    p.kernel.func = func, p.kernel.gridDim = dim3(1), p.kernel.blockDim = dim3(1), p.kernel.kernelParams = args;
    cudaGraphNode_t node;
    cudaGraphAddNode(&node, g, dep, nullptr, dep ? 1 : 0, &p);
    return node;
}

// A graph: decide (sets the handle from *in) -> conditional node of `type` with `size` bodies, body i writes i + 10.
static cudaGraphExec_t branching(int *in, int *out, cudaGraphConditionalNodeType type, unsigned size, int *values) {
    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphConditionalHandle handle;
    cudaGraphConditionalHandleCreate(&handle, g);
    void *decide_args[] = {&in, &handle};
    cudaGraphNode_t first = add_kernel(g, nullptr, (void *)decide, decide_args);
    cudaGraphNodeParams c = {cudaGraphNodeTypeConditional};
    c.conditional.handle = handle, c.conditional.type = type, c.conditional.size = size;
    cudaGraphNode_t conditional;
    cudaGraphAddNode(&conditional, g, &first, nullptr, 1, &c);
    for (unsigned i = 0; i < size; i++) {
        void *put_args[] = {&out, &values[i]};
        add_kernel(c.conditional.phGraph_out[i], nullptr, (void *)put, put_args);
    }
    cudaGraphExec_t exec;
    cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    return exec;
}

static int run(cudaGraphExec_t exec, int *in, int value, int *out) {
    int result = 0;
    cudaMemcpy(in, &value, sizeof value, cudaMemcpyHostToDevice);
    cudaMemset(out, 0, sizeof(int));
    cudaGraphLaunch(exec, 0);
    cudaMemcpy(&result, out, sizeof result, cudaMemcpyDeviceToHost);
    return result;
}

int main() {
    int *in, *out, *counter, *rounds;
    cudaMalloc(&in, sizeof(int));
    cudaMalloc(&out, sizeof(int));
    cudaMalloc(&counter, sizeof(int));
    cudaMalloc(&rounds, sizeof(int));

    int values[] = {10, 11, 12};
    cudaGraphExec_t if_else = branching(in, out, cudaGraphCondTypeIf, 2, values);
    printf("if 0: %s\n", run(if_else, in, 0, out) == 11 ? "else ran" : "then ran");
    printf("if 1: %s\n", run(if_else, in, 1, out) == 10 ? "then ran" : "else ran");

    cudaGraph_t g;
    cudaGraphCreate(&g, 0);
    cudaGraphConditionalHandle loop;
    cudaGraphConditionalHandleCreate(&loop, g, 1, cudaGraphCondAssignDefault);
    cudaGraphNodeParams c = {cudaGraphNodeTypeConditional};
    c.conditional.handle = loop, c.conditional.type = cudaGraphCondTypeWhile, c.conditional.size = 1;
    cudaGraphNode_t while_node;
    cudaGraphAddNode(&while_node, g, nullptr, nullptr, 0, &c);
    void *count_args[] = {&counter, &rounds, &loop};
    add_kernel(c.conditional.phGraph_out[0], nullptr, (void *)count_down, count_args);
    cudaGraphExec_t while_exec;
    cudaGraphInstantiate(&while_exec, g, 0);
    for (int pass = 0; pass < 2; pass++) {
        int start = 5, zero = 0, n, left;
        cudaMemcpy(counter, &start, sizeof start, cudaMemcpyHostToDevice);
        cudaMemcpy(rounds, &zero, sizeof zero, cudaMemcpyHostToDevice);
        cudaGraphLaunch(while_exec, 0);
        cudaMemcpy(&n, rounds, sizeof n, cudaMemcpyDeviceToHost);
        cudaMemcpy(&left, counter, sizeof left, cudaMemcpyDeviceToHost);
        printf("while%s: %d rounds, counter %d\n", pass ? " again" : "", n, left);
    }

    cudaGraphExec_t choose = branching(in, out, cudaGraphCondTypeSwitch, 2, values);
    for (int v : {0, 1, 2, 7}) printf("switch %d: %d\n", v, run(choose, in, v, out));
    return 0;
}
