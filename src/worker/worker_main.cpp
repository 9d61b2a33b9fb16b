// STUB: cks-worker entry point, replaced by the worker's owner.
int main() { return 0; }
