#include "ff-bench.h"
