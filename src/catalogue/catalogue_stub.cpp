// STUB (temporary): replaced by the catalogue implementation.
#include "cks/catalogue.hpp"
