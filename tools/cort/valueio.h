/* Reading, writing, generating and printing values for the CLI. */
#ifndef CORT_CLI_VALUEIO_H
#define CORT_CLI_VALUEIO_H
#include <stdint.h>
#include <stdio.h>
#include "cort.h"
#include "cli.h"

/* Loads FILE: ".npy" as a NumPy array, anything else as a serialized TensorProto / SequenceProto /
 * OptionalProto / MapProto. kind_hint: 0 guesses, else 1 tensor, 2 sequence, 3 optional, 4 map. */
cort_status *cli_load_value(const char *path, int kind_hint, cort_value **out);
/* Makes a loaded input the element type the model declares when the file cannot say it: uint16 bits
 * for bfloat16, uint8/int8 for the types added after ONNX 1.12 (.npy has no dtype for them). */
cort_status *cli_retype_input(cort_value **v, const cort_value_type *declared);
/* Writes a value to path: ".npy" (tensors only) or protobuf (name stored in the proto). */
cort_status *cli_save_value(const char *path, const cort_value *v, const char *name);
/* One-line summary: "name: float[1,10] = [0.1, 0.2, ...]" with up to max_values values. */
void cli_print_value(FILE *f, const char *name, const cort_value *v, size_t max_values);

/* Deterministic generator (splitmix64) for seeded random inputs. */
typedef struct cli_rng { uint64_t state; } cli_rng;
void     cli_rng_seed(cli_rng *r, uint64_t seed);
uint64_t cli_rng_next(cli_rng *r);
/* Random tensor: floats uniform in [-1, 1), integers in [0, 4), bools 0/1, strings "s0".."s9". */
cort_status *cli_random_tensor(cort_type type, const int64_t *dims, size_t rank, cli_rng *r, cort_value **out);

/* Builds a value for every session input that has none in inputs[] (seeded random values of the
 * declared type; symbolic or unknown dims = --dim value or 1). model_path is used to read the
 * declared type of non-tensor inputs. */
cort_status *cli_fill_random_inputs(cort_session *s, const char *model_path, const cli_session_args *args,
                                    cli_rng *r, cort_value **inputs);
/* Loads DIR/input_K.pb or DIR/input_K.npy for every session input K that has no value yet and whose
 * file exists. *n_found counts the files read. */
cort_status *cli_load_input_dir(cort_session *s, const char *dir, cort_value **inputs, size_t *n_found);
#endif
