/*
 * The rows of `osn testbed` as a table, a CSV and a JSON array (testbed.h). The three carry the
 * same figures; the CSV's column names are those scripts/testbed_plot.sh reads (control, load,
 * rate, sim_goodput, sim_goodput_hw, sim_replications, real_goodput), and a figure that does
 * not exist (no call set up, a run without its summaries) is an empty CSV field and a JSON null,
 * which pandas reads as NaN.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "outputs.h"
#include "testbed.h"

void tb_table_header(FILE *f)
{
    fprintf(f, "%-7s %5s %7s | %-22s %9s %6s | %-15s | %-15s | %-13s | %s\n", "control", "load",
            "rate", "sim goodput +- hw (n)", "real", "ratio", "p50 sim/real", "p99 sim/real",
            "overload s/r", "notes");
}

/* A delay in seconds with 3 decimals, "-" when there is none. */
static const char *secs(char *buf, size_t size, double v)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else
        snprintf(buf, size, "%.3f", v);
    return buf;
}

void tb_table_row(FILE *f, const struct tb_row *r)
{
    char sim[64], s50[16], r50[16], s99[16], r99[16], p50[40], p99[40], ratio[16];
    char so[16], ro[16], ovl[40];

    snprintf(sim, sizeof sim, "%.1f +- %.1f (%ld)", r->sim_goodput, r->sim_hw, r->sim_n);
    snprintf(p50, sizeof p50, "%s / %s", secs(s50, sizeof s50, r->sim_p50),
             secs(r50, sizeof r50, r->real_p50));
    snprintf(p99, sizeof p99, "%s / %s", secs(s99, sizeof s99, r->sim_p99),
             secs(r99, sizeof r99, r->real_p99));
    snprintf(ovl, sizeof ovl, "%s / %s", secs(so, sizeof so, r->sim_overload),
             secs(ro, sizeof ro, r->real_overload));
    if (isnan(r->ratio))
        snprintf(ratio, sizeof ratio, "-");
    else
        snprintf(ratio, sizeof ratio, "%.3f", r->ratio);
    fprintf(f, "%-7s %4gx %7.1f | %-22s %9.1f %6s | %-15s | %-15s | %-13s | %s%s%s\n", r->control,
            r->load, r->rate, sim, r->real_goodput, ratio, p50, p99, ovl,
            r->collected == r->elements ? "" : "MISSING SUMMARIES: ", r->notes,
            r->notes[0] || r->collected != r->elements ? "" : "-");
}

static void csv_num(FILE *f, double v)
{
    if (!isnan(v) && !isinf(v))
        fprintf(f, "%.10g", v);
    fputc(',', f);
}

int tb_csv_write(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct tb_rows *rows = ctx;
    (void)err;
    (void)errsize;
    fprintf(f, "control,load,rate,sim_goodput,sim_goodput_hw,sim_replications,real_goodput,"
               "ratio,sim_p50_s,real_p50_s,sim_p99_s,real_p99_s,real_offered,lag_max_s,"
               "late_sends,unfinished,elements,collected,warmup_s,duration_s,sim_core_overload,"
               "real_core_overload,sim_goodput_min,sim_goodput_max,sim_below_real,sim_failed,"
               "real_failed,sim_abandoned,real_abandoned,sim_retries,real_retries,notes\n");
    for (int i = 0; i < rows->n; i++) {
        const struct tb_row *r = &rows->r[i];
        fprintf(f, "%s,", r->control);
        csv_num(f, r->load);
        csv_num(f, r->rate);
        csv_num(f, r->sim_goodput);
        csv_num(f, r->sim_hw);
        fprintf(f, "%ld,", r->sim_n);
        csv_num(f, r->real_goodput);
        csv_num(f, r->ratio);
        csv_num(f, r->sim_p50);
        csv_num(f, r->real_p50);
        csv_num(f, r->sim_p99);
        csv_num(f, r->real_p99);
        csv_num(f, r->real_offered);
        csv_num(f, r->lag_max);
        fprintf(f, "%ld,%ld,%d,%d,", r->late_sends, r->unfinished, r->elements, r->collected);
        csv_num(f, rows->cfg->warmup);
        csv_num(f, rows->cfg->duration);
        csv_num(f, r->sim_overload);
        csv_num(f, r->real_overload);
        csv_num(f, r->sim_min);
        csv_num(f, r->sim_max);
        if (r->sim_below >= 0)
            fprintf(f, "%d", r->sim_below);
        fputc(',', f);
        for (int k = 0; k < 3; k++) {
            csv_num(f, r->sim_more[k]);
            csv_num(f, r->real_more[k]);
        }
        osn_cli_csv_field(f, r->notes);
        fputc('\n', f);
    }
    return ferror(f) ? -1 : 0;
}

static json_t *jnum(double v)
{
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

int tb_json_write(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct tb_rows *rows = ctx;
    json_t *a = json_array();

    for (int i = 0; i < rows->n; i++) {
        const struct tb_row *r = &rows->r[i];
        json_t *o = json_object();
        json_object_set_new(o, "control", json_string(r->control));
        json_object_set_new(o, "load", jnum(r->load));
        json_object_set_new(o, "rate", jnum(r->rate));
        json_object_set_new(o, "sim_goodput", jnum(r->sim_goodput));
        json_object_set_new(o, "sim_goodput_hw", jnum(r->sim_hw));
        json_object_set_new(o, "sim_replications", json_integer(r->sim_n));
        json_object_set_new(o, "real_goodput", jnum(r->real_goodput));
        json_object_set_new(o, "ratio", jnum(r->ratio));
        json_object_set_new(o, "sim_p50_s", jnum(r->sim_p50));
        json_object_set_new(o, "real_p50_s", jnum(r->real_p50));
        json_object_set_new(o, "sim_p99_s", jnum(r->sim_p99));
        json_object_set_new(o, "real_p99_s", jnum(r->real_p99));
        json_object_set_new(o, "real_offered", jnum(r->real_offered));
        json_object_set_new(o, "lag_max_s", jnum(r->lag_max));
        json_object_set_new(o, "late_sends", json_integer(r->late_sends));
        json_object_set_new(o, "unfinished", json_integer(r->unfinished));
        json_object_set_new(o, "elements", json_integer(r->elements));
        json_object_set_new(o, "collected", json_integer(r->collected));
        json_object_set_new(o, "warmup_s", jnum(rows->cfg->warmup));
        json_object_set_new(o, "duration_s", jnum(rows->cfg->duration));
        json_object_set_new(o, "sim_core_overload", jnum(r->sim_overload));
        json_object_set_new(o, "sim_goodput_min", jnum(r->sim_min));
        json_object_set_new(o, "sim_goodput_max", jnum(r->sim_max));
        json_object_set_new(o, "sim_below_real",
                            r->sim_below >= 0 ? json_integer(r->sim_below) : json_null());
        json_object_set_new(o, "real_core_overload", jnum(r->real_overload));
        static const char *const more[] = TB_MORE_KEYS;
        for (int k = 0; k < 3; k++) { /* sim_failed, real_failed, ... */
            char key[32];
            snprintf(key, sizeof key, "sim_%s", more[k]);
            json_object_set_new(o, key, jnum(r->sim_more[k]));
            snprintf(key, sizeof key, "real_%s", more[k]);
            json_object_set_new(o, key, jnum(r->real_more[k]));
        }
        json_object_set_new(o, "notes", json_string(r->notes));
        json_object_set_new(o, "nodes", r->elems ? json_incref(r->elems) : json_array());
        json_array_append_new(a, o);
    }
    int rc = json_dumpf(a, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(a);
    fputc('\n', f);
    if (rc != 0) {
        snprintf(err, errsize, "cannot write the JSON");
        return -1;
    }
    return 0;
}
