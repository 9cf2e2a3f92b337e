#include <iostream>
int main() { std::cout << "rlx\n"; return 0; }
