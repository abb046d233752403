// Symbol visibility for the public API: everything else is hidden (-fvisibility=hidden).
#pragma once

#define SLIPSTREAM_API __attribute__((visibility("default")))
