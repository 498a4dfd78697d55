// flowc: the Flow compiler driver. Commands live in driver/*_command.cpp; cli.cpp dispatches.
#include "driver/cli.h"

int main(int argc, char** argv) {
  return flow::driver::RunCli(argc, argv);
}
