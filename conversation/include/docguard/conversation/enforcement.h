// Old name, kept while proxy/session.h includes it; use request_plan.h or reply_merge.h.
#pragma once
#include "docguard/conversation/reply_merge.h"  // includes request_plan.h
