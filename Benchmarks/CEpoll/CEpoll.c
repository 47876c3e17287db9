// Only the header is used (see include/CEpoll.h).
#include "CEpoll.h"
