/* The C reference loop: whole games of Marrakech between uniformly random players, as
 * fast as plain C plays them, to measure the runner against (benchmarks/bench_vs_c.py).
 *
 * The standard rules of docs/rules.md with 4 players: a 7x7 board, 12 rugs each, 30
 * dirhams, the die 1 2 2 3 3 4, Assam on (3,3) facing N, the standard turn order, the
 * game ending when one player is left, ties broken by dirhams. Each turn a random
 * player turns Assam left, right or not at all (1/3 each) and places a rug uniformly
 * among its legal placements, as the package's `random` strategy does (its draws
 * differ, so the games differ: the two agree in distribution, which
 * bench_vs_c.py checks on game length, bankruptcies and seat shares).
 *
 * Lookup tables, computed once: every walk (square, facing, steps) and every square's
 * candidate placements. Nothing is written per game; the totals printed at the end keep
 * the compiler from dropping the games.
 *
 * Build and run: cc -O2 -o marrakech_random marrakech_random.c -lm && ./marrakech_random GAMES SEED
 * Prints one JSON line: games, seconds (wall), games_per_s, cpu_seconds, games_per_cpu_s,
 * mean_turns, sd_turns, bankrupt_share (games with a bankruptcy), seat_shares (win shares).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 7
#define SQ (N * N)
#define P 4
#define RUGS 12
#define DIRHAMS 30
#define MAX_WALK 4

static const int FACES[6] = {1, 2, 2, 3, 3, 4};

/* xoshiro256** (Blackman and Vigna), seeded by splitmix64 */
static uint64_t rng_s[4];
static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
static inline uint64_t rng_next(void) {
    uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
    rng_s[2] ^= rng_s[0]; rng_s[3] ^= rng_s[1]; rng_s[1] ^= rng_s[2]; rng_s[0] ^= rng_s[3];
    rng_s[2] ^= t; rng_s[3] = rotl(rng_s[3], 45);
    return r;
}
static inline uint32_t below(uint32_t n) { /* Lemire's multiply-shift; bias < 2^-32 */
    return (uint32_t)(((rng_next() >> 32) * (uint64_t)n) >> 32);
}
static void rng_seed(uint64_t seed) {
    for (int i = 0; i < 4; i++) {
        uint64_t z = (seed += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        rng_s[i] = z ^ (z >> 31);
    }
}

/* One step of Assam with the edge arcs (docs/rules.md section 4). Facings 0 N 1 E 2 S 3 W. */
static void step(int *x, int *y, int *f) {
    if (*f == 0) {
        if (*y > 0) { (*y)--; return; }
        if (*x == N - 1) { *f = 3; return; }        /* corner arc at top-right */
        *x ^= 1; *f = 2; return;                    /* columns {0,1} {2,3} {4,5} */
    }
    if (*f == 2) {
        if (*y < N - 1) { (*y)++; return; }
        if (*x == 0) { *f = 1; return; }            /* corner arc at bottom-left */
        *x = (*x % 2 == 1) ? *x + 1 : *x - 1; *f = 0; return;  /* {1,2} {3,4} {5,6} */
    }
    if (*f == 3) {
        if (*x > 0) { (*x)--; return; }
        if (*y == N - 1) { *f = 0; return; }        /* corner arc at bottom-left */
        *y ^= 1; *f = 1; return;                    /* rows {0,1} {2,3} {4,5} */
    }
    if (*x < N - 1) { (*x)++; return; }
    if (*y == 0) { *f = 2; return; }                /* corner arc at top-right */
    *y = (*y % 2 == 1) ? *y + 1 : *y - 1; *f = 3;   /* rows {1,2} {3,4} {5,6} */
}

static uint8_t WALK_SQ[SQ][4][MAX_WALK + 1], WALK_F[SQ][4][MAX_WALK + 1];
static uint8_t NEIGH[SQ][4], NNEIGH[SQ];
static uint8_t CAND_A[SQ][12], CAND_B[SQ][12], NCAND[SQ];

static void tables(void) {
    for (int s = 0; s < SQ; s++)
        for (int f = 0; f < 4; f++) {
            int x = s % N, y = s / N, g = f;
            for (int k = 1; k <= MAX_WALK; k++) {
                step(&x, &y, &g);
                WALK_SQ[s][f][k] = (uint8_t)(y * N + x);
                WALK_F[s][f][k] = (uint8_t)g;
            }
        }
    static const int DX[4] = {0, 1, 0, -1}, DY[4] = {-1, 0, 1, 0};
    for (int s = 0; s < SQ; s++) {
        NNEIGH[s] = 0;
        for (int d = 0; d < 4; d++) {
            int x = s % N + DX[d], y = s / N + DY[d];
            if (x >= 0 && x < N && y >= 0 && y < N) NEIGH[s][NNEIGH[s]++] = (uint8_t)(y * N + x);
        }
    }
    /* placements {a, b}: adjacent squares, one of them next to Assam, neither Assam's
     * (docs/rules.md section 6), each unordered pair once */
    for (int s = 0; s < SQ; s++) {
        NCAND[s] = 0;
        for (int i = 0; i < NNEIGH[s]; i++) {
            int a = NEIGH[s][i];
            for (int j = 0; j < NNEIGH[a]; j++) {
                int b = NEIGH[a][j], lo = a < b ? a : b, hi = a < b ? b : a, seen = 0;
                if (b == s) continue;
                for (int c = 0; c < NCAND[s]; c++)
                    if (CAND_A[s][c] == lo && CAND_B[s][c] == hi) seen = 1;
                if (!seen) { CAND_A[s][NCAND[s]] = (uint8_t)lo; CAND_B[s][NCAND[s]++] = (uint8_t)hi; }
            }
        }
    }
}

/* the 4-connected region of colour c at square s (docs/rules.md section 5) */
static int region(const int8_t *colour, int s, int c) {
    uint8_t stack[SQ], seen[SQ];
    memset(seen, 0, sizeof seen);
    int top = 0, size = 0;
    stack[top++] = (uint8_t)s; seen[s] = 1;
    while (top) {
        int q = stack[--top];
        size++;
        for (int i = 0; i < NNEIGH[q]; i++) {
            int r = NEIGH[q][i];
            if (!seen[r] && colour[r] == c) { seen[r] = 1; stack[top++] = (uint8_t)r; }
        }
    }
    return size;
}

typedef struct { long turns, turns2, bankrupt; double share[P]; } Result;

static void play(Result *res) {
    int8_t colour[SQ];
    int16_t rug[SQ];
    int dirhams[P], out[P], left[P], in_game = P, next_rug = 0, turns = 0, bankrupt = 0;
    memset(colour, -1, sizeof colour);
    for (int i = 0; i < SQ; i++) rug[i] = -1;
    for (int p = 0; p < P; p++) { dirhams[p] = DIRHAMS; out[p] = 0; left[p] = RUGS; }
    int sq = 3 * N + 3, f = 0, seat = 0;
    for (;;) {
        turns++;
        f = (f + 3 + (int)below(3)) & 3;  /* left, straight or right */
        int steps = FACES[below(6)], g = f;
        f = WALK_F[sq][g][steps];
        sq = WALK_SQ[sq][g][steps];
        int c = colour[sq], placed = 1;
        if (c >= 0 && c != seat && !out[c]) {
            int amount = region(colour, sq, c);
            if (dirhams[seat] < amount) {  /* bankruptcy: pays all, leaves the game */
                dirhams[c] += dirhams[seat];
                dirhams[seat] = 0; out[seat] = 1; left[seat] = 0; in_game--; bankrupt = 1;
                placed = 0;
            } else {
                dirhams[seat] -= amount; dirhams[c] += amount;
            }
        }
        if (placed) {
            uint8_t legal[12];
            int n = 0;
            for (int i = 0; i < NCAND[sq]; i++) {
                int a = CAND_A[sq][i], b = CAND_B[sq][i];
                /* both halves of one rug still visible may not be covered (section 6.3) */
                if (!(rug[a] >= 0 && rug[a] == rug[b])) legal[n++] = (uint8_t)i;
            }
            int pick = legal[below((uint32_t)n)];
            int a = CAND_A[sq][pick], b = CAND_B[sq][pick];
            colour[a] = colour[b] = (int8_t)seat;
            rug[a] = rug[b] = (int16_t)next_rug++;
            left[seat]--;
        }
        if (in_game <= 1) break;
        int any = 0;
        for (int p = 0; p < P; p++) any |= !out[p] && left[p] > 0;
        if (!any) break;
        do seat = (seat + 1) % P; while (out[seat] || left[seat] == 0);
    }
    /* score: dirhams + visible squares; ties by dirhams, then shared (section 7) */
    int score[P] = {0}, best = -1, best_d = -1, winners = 0;
    for (int i = 0; i < SQ; i++) if (colour[i] >= 0) score[(int)colour[i]]++;
    for (int p = 0; p < P; p++) {
        if (out[p]) continue;
        score[p] += dirhams[p];
        if (score[p] > best || (score[p] == best && dirhams[p] > best_d)) {
            best = score[p]; best_d = dirhams[p]; winners = 1;
        } else if (score[p] == best && dirhams[p] == best_d) winners++;
    }
    for (int p = 0; p < P; p++)
        if (!out[p] && score[p] == best && dirhams[p] == best_d) res->share[p] += 1.0 / winners;
    res->turns += turns;
    res->turns2 += (long)turns * turns;
    res->bankrupt += bankrupt;
}

int main(int argc, char **argv) {
    long games = argc > 1 ? atol(argv[1]) : 1000000;
    rng_seed(argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
    tables();
    Result res;
    memset(&res, 0, sizeof res);
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    for (long i = 0; i < games; i++) play(&res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    printf("{\"games\": %ld, \"seconds\": %.4f, \"games_per_s\": %.1f, \"cpu_seconds\": %.4f, "
           "\"games_per_cpu_s\": %.1f, \"mean_turns\": %.4f, \"sd_turns\": %.4f, "
           "\"bankrupt_share\": %.6f, \"seat_shares\": [%.6f, %.6f, %.6f, %.6f]}\n",
           games, s, games / s, cpu, games / cpu, (double)res.turns / games,
           sqrt((double)res.turns2 / games - ((double)res.turns / games) * ((double)res.turns / games)),
           (double)res.bankrupt / games,
           res.share[0] / games, res.share[1] / games, res.share[2] / games, res.share[3] / games);
    return 0;
}
