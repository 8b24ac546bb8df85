/* ImageDecoder (opset 20): a uint8 tensor holding an encoded image -> uint8 [H, W, C] with C = 3
 * (RGB or BGR) or 1 (Grayscale). JPEG through libjpeg-turbo and PNG through libpng (optional:
 * CORT_IMAGE_CODECS; without them the op fails session creation); BMP, PNM (PBM/PGM/PPM) and
 * uncompressed TIFF are decoded here, they are simple enough to parse safely by hand. As the spec says, a stream that
 * cannot be decoded (corrupt, truncated, unsupported format) gives an empty [0, 0, C] image, not
 * an error: only running out of memory fails the run. Grayscale is ITU-R 601 luma of the RGB
 * decode in 16-bit fixed point, the conversion Pillow (ONNX's reference) applies; alpha channels
 * are dropped and palettes expanded, so the output always has C channels. Differences to the
 * reference are listed in docs/text_image_ops.md. */
#include <string.h>
#include "../misc_common.h"

#if defined(CORT_HAVE_JPEG)
#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>
#include <jerror.h>
#endif
#if defined(CORT_HAVE_PNG)
#include <png.h>
#endif
#if defined(CORT_HAVE_WEBP)
#include <webp/decode.h>
#endif
#if defined(CORT_HAVE_OPENJP2)
#include <openjpeg.h>
#endif

/* Largest image decoded: 2^28 pixels (16384 x 16384), so a forged header cannot ask for more than
 * 768 MiB of pixels; a real image of that size is far beyond what a model takes as input. */
#define IMG_MAX_PIXELS ((uint64_t)1 << 28)

enum { PF_RGB, PF_BGR, PF_GRAY };

typedef struct img_out {
    cort_kernel_ctx *ctx;
    uint8_t *rgb;          /* H*W*3, from cort_kernel_scratch */
    uint32_t w, h;
    int oom;               /* the failure was out-of-memory (an error, not an empty image) */
} img_out;

/* Allocates o->rgb for a w x h image; 0 (and o->oom when memory ran out) on failure. */
static int img_alloc(img_out *o, uint64_t w, uint64_t h) {
    if (!w || !h || w > UINT32_MAX || h > UINT32_MAX || w * h > IMG_MAX_PIXELS) return 0;
    o->rgb = cort_kernel_scratch(o->ctx, (size_t)(w * h * 3));
    if (!o->rgb) { o->oom = 1; return 0; }
    o->w = (uint32_t)w;
    o->h = (uint32_t)h;
    return 1;
}

static void img_release(img_out *o) {
    if (o->rgb) cort_kernel_scratch_free(o->ctx, o->rgb);
    o->rgb = NULL;
}

/* ---- little readers over the encoded bytes ---- */
static uint32_t rd_le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t rd_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* ---- BMP: uncompressed 1/4/8-bit palette, 24 and 32-bit (BI_RGB; 32-bit BI_BITFIELDS with the
 * standard masks), bottom-up or top-down ---- */
static int bmp_decode(const uint8_t *d, size_t n, img_out *o) {
    if (n < 26 || d[0] != 'B' || d[1] != 'M') return 0;
    uint32_t off = rd_le32(d + 10), hs = rd_le32(d + 14);
    if (hs < 40 || hs > n - 14 || n < 14 + 40) return 0;
    int32_t w = (int32_t)rd_le32(d + 18), h = (int32_t)rd_le32(d + 22);
    uint16_t planes = rd_le16(d + 26), bpp = rd_le16(d + 28);
    uint32_t comp = rd_le32(d + 30), ncolors = rd_le32(d + 46);
    if (planes != 1 || w <= 0 || h == 0 || h == INT32_MIN) return 0;
    int topdown = h < 0;
    uint64_t W = (uint64_t)w, H = (uint64_t)(topdown ? -(int64_t)h : h);
    if (comp == 3 && bpp == 32) {
        /* BI_BITFIELDS: only the usual BGRX layout */
        if (hs < 52 && n < 14 + 40 + 12) return 0;
        const uint8_t *m = d + 14 + 40;
        if (rd_le32(m) != 0xFF0000u || rd_le32(m + 4) != 0xFF00u || rd_le32(m + 8) != 0xFFu) return 0;
    } else if (comp != 0) {
        return 0;
    }
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 24 && bpp != 32) return 0;
    const uint8_t *pal = NULL;
    uint32_t npal = 0;
    if (bpp <= 8) {
        npal = ncolors ? ncolors : 1u << bpp;
        if (npal > (1u << bpp)) return 0;
        uint64_t pstart = 14 + (uint64_t)hs;
        if (pstart + (uint64_t)npal * 4 > n) return 0;
        pal = d + pstart;
    }
    uint64_t stride = ((W * bpp + 31) / 32) * 4;
    if (off > n || stride * H > n - off) return 0;
    if (!img_alloc(o, W, H)) return 0;
    for (uint64_t y = 0; y < H; y++) {
        const uint8_t *row = d + off + (topdown ? y : H - 1 - y) * stride;
        uint8_t *dst = o->rgb + y * W * 3;
        for (uint64_t x = 0; x < W; x++) {
            uint32_t idx;
            if (bpp == 24 || bpp == 32) {
                const uint8_t *p = row + x * (bpp / 8);
                dst[3 * x] = p[2]; dst[3 * x + 1] = p[1]; dst[3 * x + 2] = p[0];
                continue;
            }
            if (bpp == 8) idx = row[x];
            else if (bpp == 4) idx = (row[x / 2] >> (x & 1 ? 0 : 4)) & 15;
            else idx = (row[x / 8] >> (7 - (x & 7))) & 1;
            if (idx >= npal) { img_release(o); return 0; }
            const uint8_t *p = pal + 4 * idx;
            dst[3 * x] = p[2]; dst[3 * x + 1] = p[1]; dst[3 * x + 2] = p[0];
        }
    }
    return 1;
}

/* ---- PNM: P1..P6 (ASCII and binary bitmaps, graymaps, pixmaps), maxval up to 65535 ---- */
typedef struct pnm_rd { const uint8_t *d; size_t n, i; } pnm_rd;

static int pnm_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* Next decimal header/ASCII field (comments skipped); 0 on failure. */
static int pnm_uint(pnm_rd *r, uint32_t *v) {
    for (;;) {
        while (r->i < r->n && pnm_space(r->d[r->i])) r->i++;
        if (r->i < r->n && r->d[r->i] == '#') { while (r->i < r->n && r->d[r->i] != '\n') r->i++; continue; }
        break;
    }
    if (r->i >= r->n || r->d[r->i] < '0' || r->d[r->i] > '9') return 0;
    uint64_t x = 0;
    while (r->i < r->n && r->d[r->i] >= '0' && r->d[r->i] <= '9') {
        x = x * 10 + (uint64_t)(r->d[r->i++] - '0');
        if (x > UINT32_MAX) return 0;
    }
    *v = (uint32_t)x;
    return 1;
}

static int pnm_decode(const uint8_t *d, size_t n, img_out *o) {
    if (n < 3 || d[0] != 'P' || d[1] < '1' || d[1] > '6') return 0;
    int kind = d[1] - '0', bitmap = kind == 1 || kind == 4, color = kind == 3 || kind == 6, binary = kind >= 4;
    pnm_rd r = { d, n, 2 };
    uint32_t w, h, maxv = 1;
    if (!pnm_uint(&r, &w) || !pnm_uint(&r, &h) || (!bitmap && !pnm_uint(&r, &maxv))) return 0;
    if (maxv == 0 || maxv > 65535) return 0;
    if (binary) {
        if (r.i >= n || !pnm_space(d[r.i])) return 0;
        r.i++;   /* exactly one whitespace byte before the raster */
    }
    uint64_t W = w, H = h, ch = color ? 3 : 1, bps = maxv > 255 ? 2 : 1;
    if (!W || !H || W * H > IMG_MAX_PIXELS) return 0;
    if (binary) {
        uint64_t need = bitmap ? (W + 7) / 8 * H : W * H * ch * bps;
        if (need > n - r.i) return 0;
    }
    if (!img_alloc(o, W, H)) return 0;
    for (uint64_t y = 0; y < H; y++)
        for (uint64_t x = 0; x < W; x++) {
            uint8_t px[3];
            for (uint64_t c = 0; c < ch; c++) {
                uint32_t v;
                if (bitmap && binary) {
                    v = (d[r.i + y * ((W + 7) / 8) + x / 8] >> (7 - (x & 7))) & 1;
                } else if (binary) {
                    const uint8_t *p = d + r.i + ((y * W + x) * ch + c) * bps;
                    v = bps == 2 ? (uint32_t)p[0] << 8 | p[1] : p[0];
                } else if (bitmap) {
                    /* plain PBM digits need no separators */
                    while (r.i < n && (pnm_space(d[r.i]) || d[r.i] == '#')) {
                        if (d[r.i] == '#') while (r.i < n && d[r.i] != '\n') r.i++;
                        else r.i++;
                    }
                    if (r.i >= n || (d[r.i] != '0' && d[r.i] != '1')) { img_release(o); return 0; }
                    v = (uint32_t)(d[r.i++] - '0');
                } else if (!pnm_uint(&r, &v)) {
                    img_release(o);
                    return 0;
                }
                if (bitmap) { px[c] = v ? 0 : 255; continue; }   /* PBM: 1 is black */
                if (v > maxv) v = maxv;
                px[c] = (uint8_t)(((uint64_t)v * 255 + maxv / 2) / maxv);
            }
            uint8_t *dst = o->rgb + (y * W + x) * 3;
            if (ch == 1) px[1] = px[2] = px[0];
            memcpy(dst, px, 3);
        }
    return 1;
}

/* ---- TIFF: baseline uncompressed strips, 8 bits per sample, grey (either polarity), RGB or
 * RGB plus extra samples (dropped), chunky planar configuration ---- */
typedef struct tif_rd { const uint8_t *d; size_t n; int be; } tif_rd;

static uint32_t tif_u16(const tif_rd *t, size_t o) { return t->be ? (uint32_t)(t->d[o] << 8 | t->d[o + 1]) : rd_le16(t->d + o); }
static uint32_t tif_u32(const tif_rd *t, size_t o) {
    return t->be ? (uint32_t)t->d[o] << 24 | (uint32_t)t->d[o + 1] << 16 | (uint32_t)t->d[o + 2] << 8 | t->d[o + 3] : rd_le32(t->d + o);
}

/* Value k of an IFD entry of type SHORT or LONG; 0 when out of range. */
static int tif_value(const tif_rd *t, size_t entry, uint32_t k, uint32_t *v) {
    uint32_t type = tif_u16(t, entry + 2), count = tif_u32(t, entry + 4);
    size_t sz = type == 3 ? 2 : type == 4 ? 4 : 0;
    if (!sz || k >= count) return 0;
    size_t base = (uint64_t)count * sz <= 4 ? entry + 8 : tif_u32(t, entry + 8);
    if (base > t->n || (uint64_t)count * sz > t->n - base) return 0;
    *v = sz == 2 ? tif_u16(t, base + k * 2) : tif_u32(t, base + (size_t)k * 4);
    return 1;
}

static int tiff_decode(const uint8_t *d, size_t n, img_out *o) {
    if (n < 8) return 0;
    tif_rd t = { d, n, d[0] == 'M' };
    if (tif_u16(&t, 2) != 42) return 0;
    size_t ifd = tif_u32(&t, 4);
    if (ifd > n - 2) return 0;
    uint32_t ne = tif_u16(&t, ifd);
    if ((uint64_t)ifd + 2 + (uint64_t)ne * 12 > n) return 0;
    uint32_t w = 0, h = 0, comp = 1, photo = 99, spp = 1, rps = UINT32_MAX, planar = 1;
    size_t offs = 0, counts = 0;
    for (uint32_t e = 0; e < ne; e++) {
        size_t en = ifd + 2 + (size_t)e * 12;
        uint32_t tag = tif_u16(&t, en), v = 0;
        int scalar = tag == 256 || tag == 257 || tag == 259 || tag == 262 || tag == 277 || tag == 278 || tag == 284;
        if (scalar && !tif_value(&t, en, 0, &v)) return 0;   /* other tags (resolution...) are not read */
        switch (tag) {
        case 256: w = v; break;
        case 257: h = v; break;
        case 258:
            for (uint32_t k = 0; k < tif_u32(&t, en + 4); k++)
                if (!tif_value(&t, en, k, &v) || v != 8) return 0;
            break;
        case 259: comp = v; break;
        case 262: photo = v; break;
        case 273: offs = en; break;
        case 277: spp = v; break;
        case 278: rps = v; break;
        case 279: counts = en; break;
        case 284: planar = v; break;
        default: break;
        }
    }
    if (comp != 1 || planar != 1 || !offs || !w || !h || rps == 0) return 0;
    int grey = photo == 0 || photo == 1;
    if (!(grey && spp >= 1) && !(photo == 2 && spp >= 3)) return 0;
    if (spp > 8) return 0;
    uint64_t nstrips = ((uint64_t)h + rps - 1) / rps;
    if (tif_u32(&t, offs + 4) < nstrips) return 0;
    if (!img_alloc(o, w, h)) return 0;
    for (uint64_t s = 0; s < nstrips; s++) {
        uint32_t so, sc = 0;
        uint64_t rows = h - s * rps < rps ? h - s * rps : rps, need = rows * w * spp;
        if (!tif_value(&t, offs, (uint32_t)s, &so) || so > n || need > n - so || (counts && (!tif_value(&t, counts, (uint32_t)s, &sc) || sc < need))) {
            img_release(o);
            return 0;
        }
        const uint8_t *src = d + so;
        uint8_t *dst = o->rgb + s * rps * w * 3;
        for (uint64_t i = 0; i < rows * w; i++, src += spp, dst += 3) {
            if (grey) dst[0] = dst[1] = dst[2] = photo == 0 ? (uint8_t)(255 - src[0]) : src[0];
            else memcpy(dst, src, 3);
        }
    }
    return 1;
}

/* ---- JPEG through libjpeg-turbo ---- */
#ifdef CORT_HAVE_JPEG
typedef struct jpg_err {
    struct jpeg_error_mgr pub;
    jmp_buf jb;
} jpg_err;

/* libjpeg reports fatal errors through error_exit, which must not return: unwind to the setjmp. */
static void jpg_error_exit(j_common_ptr c) { longjmp(((jpg_err *)c->err)->jb, 1); }
/* A library never prints; a truncated stream (which libjpeg only warns about, padding the rest
 * of the image with grey) counts as undecodable. */
static void jpg_emit(j_common_ptr c, int level) {
    if (level < 0 && c->err->msg_code == JWRN_JPEG_EOF) longjmp(((jpg_err *)c->err)->jb, 1);
}
static void jpg_output(j_common_ptr c) { (void)c; }

typedef struct jpg_job {
    struct jpeg_decompress_struct cinfo;
    jpg_err err;
    img_out *o;
    const uint8_t *d;
    size_t n;
} jpg_job;

/* Everything the code after setjmp changes lives in *j (memory, not registers), so longjmp
 * cannot leave it stale. */
static int jpg_decode(jpg_job *j) {
    j->cinfo.err = jpeg_std_error(&j->err.pub);
    j->err.pub.error_exit = jpg_error_exit;
    j->err.pub.emit_message = jpg_emit;
    j->err.pub.output_message = jpg_output;
    if (setjmp(j->err.jb)) {
        jpeg_destroy_decompress(&j->cinfo);
        img_release(j->o);
        return 0;
    }
    jpeg_create_decompress(&j->cinfo);
    j->cinfo.mem->max_memory_to_use = 256L << 20;
    jpeg_mem_src(&j->cinfo, j->d, (unsigned long)j->n);
    if (jpeg_read_header(&j->cinfo, TRUE) != JPEG_HEADER_OK) longjmp(j->err.jb, 1);
    if (j->cinfo.jpeg_color_space == JCS_CMYK || j->cinfo.jpeg_color_space == JCS_YCCK) longjmp(j->err.jb, 1);
    j->cinfo.out_color_space = JCS_RGB;
    if (!img_alloc(j->o, j->cinfo.image_width, j->cinfo.image_height)) longjmp(j->err.jb, 1);
    jpeg_start_decompress(&j->cinfo);
    if (j->cinfo.output_width != j->o->w || j->cinfo.output_height != j->o->h || j->cinfo.output_components != 3) longjmp(j->err.jb, 1);
    while (j->cinfo.output_scanline < j->cinfo.output_height) {
        JSAMPROW row = j->o->rgb + (size_t)j->cinfo.output_scanline * j->o->w * 3;
        if (jpeg_read_scanlines(&j->cinfo, &row, 1) != 1) longjmp(j->err.jb, 1);
    }
    jpeg_finish_decompress(&j->cinfo);
    jpeg_destroy_decompress(&j->cinfo);
    return 1;
}
#endif

/* ---- PNG through libpng's simplified API (it catches libpng's errors itself) ---- */
#ifdef CORT_HAVE_PNG
static int png_decode(const uint8_t *d, size_t n, img_out *o) {
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&im, d, n)) return 0;
    /* read RGBA and drop A: colour values stay as stored instead of being composited */
    im.format = PNG_FORMAT_RGBA;
    uint64_t w = im.width, h = im.height;
    if (!w || !h || w * h > IMG_MAX_PIXELS) { png_image_free(&im); return 0; }
    uint8_t *rgba = cort_kernel_scratch(o->ctx, (size_t)(w * h * 4));
    if (!rgba) { png_image_free(&im); o->oom = 1; return 0; }
    if (!png_image_finish_read(&im, NULL, rgba, 0, NULL)) { png_image_free(&im); cort_kernel_scratch_free(o->ctx, rgba); return 0; }
    if (!img_alloc(o, w, h)) { cort_kernel_scratch_free(o->ctx, rgba); return 0; }
    for (size_t i = 0; i < (size_t)(w * h); i++) memcpy(o->rgb + 3 * i, rgba + 4 * i, 3);
    cort_kernel_scratch_free(o->ctx, rgba);
    return 1;
}
#endif

/* ---- WebP through libwebp (when found): still images, alpha dropped ---- */
#ifdef CORT_HAVE_WEBP
static int webp_decode(const uint8_t *d, size_t n, img_out *o) {
    int w, h;
    if (!WebPGetInfo(d, n, &w, &h) || w <= 0 || h <= 0) return 0;
    if (!img_alloc(o, (uint64_t)w, (uint64_t)h)) return 0;
    if (!WebPDecodeRGBInto(d, n, o->rgb, (size_t)w * (size_t)h * 3, w * 3)) { img_release(o); return 0; }
    return 1;
}
#endif

/* ---- JPEG 2000 (JP2 file or raw codestream) through OpenJPEG (when found) ---- */
#ifdef CORT_HAVE_OPENJP2
typedef struct jp2_mem { const uint8_t *d; size_t n, pos; } jp2_mem;

static OPJ_SIZE_T jp2_read(void *buf, OPJ_SIZE_T len, void *ud) {
    jp2_mem *m = ud;
    if (m->pos >= m->n) return (OPJ_SIZE_T)-1;
    size_t k = m->n - m->pos < len ? m->n - m->pos : len;
    memcpy(buf, m->d + m->pos, k);
    m->pos += k;
    return k;
}
static OPJ_OFF_T jp2_skip(OPJ_OFF_T len, void *ud) {
    jp2_mem *m = ud;
    if (len < 0 || (uint64_t)len > m->n - m->pos) return -1;
    m->pos += (size_t)len;
    return len;
}
static OPJ_BOOL jp2_seek(OPJ_OFF_T to, void *ud) {
    jp2_mem *m = ud;
    if (to < 0 || (uint64_t)to > m->n) return OPJ_FALSE;
    m->pos = (size_t)to;
    return OPJ_TRUE;
}
/* OpenJPEG would print its messages; a library never prints */
static void jp2_quiet(const char *msg, void *ud) { (void)msg; (void)ud; }

static int jp2_decode(const uint8_t *d, size_t n, int codestream, img_out *o) {
    jp2_mem m = { d, n, 0 };
    opj_codec_t *codec = opj_create_decompress(codestream ? OPJ_CODEC_J2K : OPJ_CODEC_JP2);
    opj_stream_t *st = opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE);
    opj_image_t *im = NULL;
    int ok = 0;
    if (!codec || !st) goto done;
    opj_set_error_handler(codec, jp2_quiet, NULL);
    opj_set_warning_handler(codec, jp2_quiet, NULL);
    opj_set_info_handler(codec, jp2_quiet, NULL);
    opj_dparameters_t prm;
    opj_set_default_decoder_parameters(&prm);
    if (!opj_setup_decoder(codec, &prm)) goto done;
    opj_stream_set_read_function(st, jp2_read);
    opj_stream_set_skip_function(st, jp2_skip);
    opj_stream_set_seek_function(st, jp2_seek);
    opj_stream_set_user_data(st, &m, NULL);
    opj_stream_set_user_data_length(st, n);
    if (!opj_read_header(st, codec, &im) || !im) goto done;
    uint64_t w = im->x1 > im->x0 ? im->x1 - im->x0 : 0, h = im->y1 > im->y0 ? im->y1 - im->y0 : 0;
    /* size check before decoding: the header alone may claim any size */
    if (!w || !h || w * h > IMG_MAX_PIXELS || (im->numcomps != 1 && im->numcomps < 3)) goto done;
    if (!opj_decode(codec, st, im) || !opj_end_decompress(codec, st)) goto done;
    uint32_t nc = im->numcomps == 1 ? 1 : 3;
    for (uint32_t c = 0; c < nc; c++) {
        const opj_image_comp_t *cp = &im->comps[c];
        if (!cp->data || cp->w != w || cp->h != h || cp->prec < 1 || cp->prec > 16) goto done;
    }
    if (im->color_space == OPJ_CLRSPC_SYCC || im->color_space == OPJ_CLRSPC_CMYK || im->color_space == OPJ_CLRSPC_EYCC) goto done;
    if (!img_alloc(o, w, h)) goto done;
    for (uint32_t c = 0; c < 3; c++) {
        const opj_image_comp_t *cp = &im->comps[nc == 1 ? 0 : c];
        int64_t maxv = ((int64_t)1 << cp->prec) - 1, bias = cp->sgnd ? (int64_t)1 << (cp->prec - 1) : 0;
        for (size_t i = 0; i < (size_t)(w * h); i++) {
            int64_t v = (int64_t)cp->data[i] + bias;
            v = v < 0 ? 0 : v > maxv ? maxv : v;
            o->rgb[3 * i + c] = (uint8_t)(cp->prec == 8 ? v : (v * 255 + maxv / 2) / maxv);
        }
    }
    ok = 1;
done:
    if (im) opj_image_destroy(im);
    if (st) opj_stream_destroy(st);
    if (codec) opj_destroy_codec(codec);
    return ok;
}
#endif

static int img_decode(const uint8_t *d, size_t n, img_out *o) {
    if (n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF) {
#ifdef CORT_HAVE_JPEG
        /* the decoder state is large (libjpeg's structs): recycled scratch, not an allocation per run */
        jpg_job *j = cort_kernel_scratch(o->ctx, sizeof *j);
        if (!j) { o->oom = 1; return 0; }
        memset(j, 0, sizeof *j);
        j->o = o; j->d = d; j->n = n;
        int ok = jpg_decode(j);
        cort_kernel_scratch_free(o->ctx, j);
        return ok;
#else
        return 0;
#endif
    }
    if (n >= 8 && !memcmp(d, "\x89PNG\r\n\x1a\n", 8)) {
#ifdef CORT_HAVE_PNG
        return png_decode(d, n, o);
#else
        return 0;
#endif
    }
    if (n >= 2 && d[0] == 'B' && d[1] == 'M') return bmp_decode(d, n, o);
    if (n >= 2 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6') return pnm_decode(d, n, o);
    if (n >= 4 && (!memcmp(d, "II*\0", 4) || !memcmp(d, "MM\0*", 4))) return tiff_decode(d, n, o);
#ifdef CORT_HAVE_WEBP
    if (n >= 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) return webp_decode(d, n, o);
#endif
#ifdef CORT_HAVE_OPENJP2
    if (n >= 12 && !memcmp(d, "\0\0\0\x0cjP  \r\n\x87\n", 12)) return jp2_decode(d, n, 0, o);
    if (n >= 4 && !memcmp(d, "\xff\x4f\xff\x51", 4)) return jp2_decode(d, n, 1, o);
#endif
    return 0;
}

static cort_status *imgdec_init(const cort_node *node, void **state) {
    (void)state;
#if !defined(CORT_HAVE_JPEG) || !defined(CORT_HAVE_PNG)
    return cort_node_error(node, CORT_ERROR_NOT_IMPLEMENTED,
                           "ImageDecoder is unavailable: this cort was built without libjpeg-turbo/libpng "
                           "(CORT_IMAGE_CODECS=OFF or libjpeg-dev/libpng-dev not found)");
#else
    const char *pf = cort_attr_str(node, "pixel_format", "RGB");
    if (strcmp(pf, "RGB") && strcmp(pf, "BGR") && strcmp(pf, "Grayscale"))
        return cort_node_error(node, CORT_ERROR_INVALID_MODEL, "attribute 'pixel_format' is '%s', must be RGB, BGR or Grayscale", pf);
    return NULL;
#endif
}

static int imgdec_format(const cort_node *node) {
    const char *pf = cort_attr_str(node, "pixel_format", "RGB");
    return !strcmp(pf, "BGR") ? PF_BGR : !strcmp(pf, "Grayscale") ? PF_GRAY : PF_RGB;
}

static cort_status *imgdec_run(cort_kernel_ctx *ctx) {
    const cort_value *x = mi_in(ctx, 0);
    if (!x || x->kind != CORT_VKIND_TENSOR || x->type != CORT_TYPE_UINT8 || x->rank != 1)
        return cort_node_error(ctx->node, CORT_ERROR_INVALID_ARGUMENT, "input 0 'encoded_stream' must be a 1-D uint8 tensor");
    int pf = imgdec_format(ctx->node);
    int64_t ch = pf == PF_GRAY ? 1 : 3;
    img_out o = { ctx, NULL, 0, 0, 0 };
    int ok = img_decode(x->data, x->count, &o);
    if (!ok && o.oom) return cort_node_error(ctx->node, CORT_ERROR_OUT_OF_MEMORY, "no memory to decode a %zu-byte image", x->count);
    int64_t dims[3] = { ok ? o.h : 0, ok ? o.w : 0, ch };
    cort_value *y;
    cort_status *st = cort_kernel_output(ctx, 0, CORT_TYPE_UINT8, dims, 3, &y);
    if (st || !ok) { img_release(&o); return st; }
    size_t npx = (size_t)o.w * o.h;
    uint8_t *dst = y->data;
    const uint8_t *src = o.rgb;
    if (pf == PF_RGB) {
        memcpy(dst, src, npx * 3);
    } else if (pf == PF_BGR) {
        for (size_t i = 0; i < npx; i++) { dst[3 * i] = src[3 * i + 2]; dst[3 * i + 1] = src[3 * i + 1]; dst[3 * i + 2] = src[3 * i]; }
    } else {
        /* 0.299 R + 0.587 G + 0.114 B with weights scaled by 2^16 (summing to exactly 2^16, so grey stays grey) */
        for (size_t i = 0; i < npx; i++)
            dst[i] = (uint8_t)(((uint32_t)src[3 * i] * 19595u + (uint32_t)src[3 * i + 1] * 38470u + (uint32_t)src[3 * i + 2] * 7471u + 0x8000u) >> 16);
    }
    img_release(&o);
    return NULL;
}

static cort_status *imgdec_infer(cort_infer_ctx *ctx) {
    int64_t dims[3] = { -1, -1, imgdec_format(ctx->node) == PF_GRAY ? 1 : 3 };
    cort_tinfo_tensor_shape(&ctx->outputs[0], CORT_TYPE_UINT8, dims, 3);
    return NULL;
}

const cort_op_def img_op_image_decoder = { .name = "ImageDecoder", .domain = "", .min_opset = 20, .max_opset = CORT_OPSET_MAX,
    .types = CORT_TBIT(CORT_TYPE_UINT8), .init = imgdec_init, .infer = imgdec_infer, .run = imgdec_run };
