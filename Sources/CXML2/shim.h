#pragma once
/* libxml2's SAX2 push parser: the image server's SVG sanitiser reads documents with it. */
#include <libxml/xmlversion.h>
/*
 * Debian builds libxml2 with ICU, and its encoding header then includes
 * ICU's, which clash with the copy of ICU inside Swift's Foundation. Only
 * the encoding handler's layout depends on it, and Imago never touches an
 * encoding handler (only the parser context holds pointers to them).
 */
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/xmlerror.h>
