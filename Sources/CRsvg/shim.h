#pragma once
#include <stddef.h>
#include <stdint.h>
#include <cairo/cairo.h>

/*
 * The few declarations of librsvg (2.52 or later) and GLib that the image
 * server uses, written out rather than included: <librsvg/rsvg.h> needs the
 * include paths of GLib, GIO and gdk-pixbuf from pkg-config, whose flags
 * carry -pthread, which SwiftPM refuses with a warning. The types have the
 * libraries' own layouts (GError, RsvgRectangle, RsvgLength; gboolean is int,
 * gsize is size_t, GQuark is uint32_t).
 */

/** A librsvg document (a GObject). */
typedef struct _RsvgHandle RsvgHandle;

/** GLib's error: a domain, a code and a message. */
typedef struct _GError {
    uint32_t domain;
    int code;
    char *message;
} GError;

/** A rectangle in user units. */
typedef struct {
    double x;
    double y;
    double width;
    double height;
} RsvgRectangle;

/** The unit of an RsvgLength. */
typedef enum {
    RSVG_UNIT_PERCENT,
    RSVG_UNIT_PX,
    RSVG_UNIT_EM,
    RSVG_UNIT_EX,
    RSVG_UNIT_IN,
    RSVG_UNIT_CM,
    RSVG_UNIT_MM,
    RSVG_UNIT_PT,
    RSVG_UNIT_PC
} RsvgUnit;

/** A CSS length: the `width` or `height` of the outermost `svg`. */
typedef struct {
    double length;
    RsvgUnit unit;
} RsvgLength;

RsvgHandle *rsvg_handle_new_from_data(const uint8_t *data, size_t data_len, GError **error);

/** librsvg's loading flags (RsvgHandleFlags). */
typedef enum {
    RSVG_HANDLE_FLAGS_NONE = 0,
    /** libxml2's limits for huge documents lifted (its XML_PARSE_HUGE). */
    RSVG_HANDLE_FLAG_UNLIMITED = 1 << 0
} RsvgHandleFlags;

/** GIO's stream, and a stream over memory it does not copy (GInputStream, gssize is ptrdiff_t). */
typedef struct _GInputStream GInputStream;
GInputStream *g_memory_input_stream_new_from_data(const void *data, ptrdiff_t len, void (*destroy)(void *));
/** Reads a document from a stream, with no base file, no cancellable (GFile and GCancellable as NULL). */
RsvgHandle *rsvg_handle_new_from_stream_sync(GInputStream *input_stream, void *base_file, RsvgHandleFlags flags,
                                             void *cancellable, GError **error);
void rsvg_handle_set_dpi(RsvgHandle *handle, double dpi);
int rsvg_handle_get_intrinsic_size_in_pixels(RsvgHandle *handle, double *out_width, double *out_height);
void rsvg_handle_get_intrinsic_dimensions(RsvgHandle *handle,
                                          int *out_has_width, RsvgLength *out_width,
                                          int *out_has_height, RsvgLength *out_height,
                                          int *out_has_viewbox, RsvgRectangle *out_viewbox);
int rsvg_handle_render_document(RsvgHandle *handle, cairo_t *cr, const RsvgRectangle *viewport, GError **error);

void g_object_unref(void *object);
void g_error_free(GError *error);
