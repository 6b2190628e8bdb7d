//===- DatabaseHandlers.cpp - Kernel-database file rules ------------------===//

#include "kpack/DatabaseHandlers.h"

using namespace kpack;

DatabaseHandler::~DatabaseHandler() = default;
