// A shared library that is no plugin: it exports neither plugin symbol.
extern "C" __attribute__((visibility("default"))) int rlx_test_unrelated_function() { return 42; }
