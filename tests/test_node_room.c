/*
 * The node's admission of a new transaction (node_room, src/node/node_int.h) against the caps
 * docs/node.md states: max_transactions live ones, and max_memory for every byte transactions
 * hold. A quiet race on 2026-12-07 found a third, fixed cap under them: 512 MiB of held
 * messages refused 194,797 calls of a uas at 40,000 calls/s whose max_memory was 5.2 GB. The
 * fixed cap now applies only with no max_memory (a C caller's cfg).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "node_int.h"

#define MiB ((size_t)1 << 20)

static void test_max_memory_is_the_budget(void **state)
{
    (void)state;
    struct osn_node_cfg cfg;
    osn_node_cfg_default(&cfg);
    cfg.max_memory = 5000 * MiB;
    size_t max = osn_node_max_transactions(&cfg); /* 5000 MiB / 2,048 */
    assert_int_equal(max, 2560000);
    /* 1.09 M live transactions holding 600 MiB of messages, all charged within 5000 MiB */
    size_t live = 1088477, held = 600 * MiB, charged = 1400 * MiB;
    assert_true(node_room(&cfg, live, held, charged, 600));
    /* max_memory bounds it: a message that would go beyond it is refused, one that fits not */
    size_t edge = cfg.max_memory - sizeof(struct ntx) - 600;
    assert_true(node_room(&cfg, live, held, edge, 600));
    assert_false(node_room(&cfg, live, held, edge + 1, 600));
    /* and max_transactions: the live ones */
    assert_true(node_room(&cfg, max - 1, held, charged, 600));
    assert_false(node_room(&cfg, max, held, charged, 600));
    cfg.max_transactions = 10;
    assert_false(node_room(&cfg, 10, 0, 0, 600));
    assert_true(node_room(&cfg, 9, 0, 0, 600));
}

static void test_no_max_memory(void **state)
{
    (void)state;
    struct osn_node_cfg cfg;
    osn_node_cfg_default(&cfg);
    cfg.max_memory = 0;
    cfg.max_transactions = 100000;
    /* without max_memory the held messages are bounded all the same (64 KB datagrams) */
    assert_true(node_room(&cfg, 10, 512 * MiB - 65535, 0, 65535));
    assert_false(node_room(&cfg, 10, 512 * MiB - 65535, 0, 65536));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_max_memory_is_the_budget),
            cmocka_unit_test(test_no_max_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
