"""The papers' numbers, transcribed from the texts in ../shared/seeds/ (cited per entry).

Only what the texts state is here. The figures themselves (001/003 Fig. 4-6, 002 Fig. 9-11,
000 Fig. 7-9) are images that the seed texts do not contain: for them the report quotes the
sentences that give their values or ratios, never read-off bar heights.
"""

# 001_3036025dc34c4021.txt Table II = 003_45ed75503520c8f4.txt Table I: seconds on one node
# (Core 2 Duo E8400 3 GHz, 2 GB; the sequential program on one core, OpenMP on two).
TABLE_SEQ_OMP = {
    "cite": "001_3036025dc34c4021.txt Table II; 003_45ed75503520c8f4.txt Table I",
    "rows": [  # size, sequential s, OpenMP s
        (3000, 258.9, 142.4),
        (6000, 1852.7, 1048.7),
        (9000, 7314.5, 3986.2),
        (12000, 14990.5, 8999.4),
    ],
    "text": "\"the speedup obtained by OpenMP is 1.8 for the first three matrix sizes and 1.65 for the "
            "last one\"; times \"directly proportional to the cube of the matrix size\" (001 Sect. V)",
}

CLUSTER_001 = ("Intel Core 2 Duo E8400 3 GHz, 2 GB, Linux 2.6.35, 100 Mb/s Ethernet, one core used per "
               "node (001_3036025dc34c4021.txt Sect. V)")

# 001 Fig. 4-5 / 003 Fig. 4-5: CAPE vs MPI. What the texts say of them.
CAPE_VS_MPI = {
    "cite": "001_3036025dc34c4021.txt Sect. V (Fig. 4, 5); 003_45ed75503520c8f4.txt Sect. VI (Fig. 4, 5)",
    "ratio_large": 1.10,   # "only about 10% higher than the execution time for MPI"
    "ratio_3000": 1.3,     # "except for matrices with a size of 3000x3000 which rate is 1.3"
    "nodes_fig5": 31,
    "size_fig4_001": 9000,
    "size_fig4_003": 12000,
    "text": [
        "Fig. 4 (001, 9000x9000): on the master, Init, Before and Compute are small against Update "
        "(\"t is similar to tu on the master node\"); on the slaves Before and Init \"are too small and "
        "can be ignored\".",
        "Fig. 4: \"for the case with three nodes, the execution time for CAPE is always larger than the "
        "one for MPI\"; \"When increasing the number of nodes to 31, this time is approximately the "
        "same for both CAPE and MPI.\"",
        "Fig. 5 (31 nodes): \"the total execution time for CAPE based on DICKPT is only about 10% higher "
        "than the execution time for MPI, except for matrices with a size of 3000x3000 which rate is 1.3\" "
        "(the same sentence in 003 Sect. VI).",
        "003 Fig. 4 (12000x12000): complete checkpoints (CAPE-1) beat incremental ones only at 3 nodes; "
        "beyond 11 nodes CAPE-1's time grows with the node count.",
    ],
}

# 001 Fig. 6 / 003 Fig. 6: speedup and efficiency.
EFFICIENCY = {
    "cite": "001_3036025dc34c4021.txt Sect. V (Fig. 6); 003_45ed75503520c8f4.txt Sect. VI (Fig. 6)",
    "low": 0.75,
    "high": 0.90,
    "text": "\"an efficiency (the ratio of the speedup over the number of nodes) in the range from 75% to 90%\"; "
            "\"the larger the size of matrices, the higher the speedup\"",
}

# 002 Fig. 9-11.
TICKPT = {
    "cite": "002_2c61c2cb27f62a9a.txt Sect. 5 (Fig. 9, 10, 11)",
    "dickpt_over_tickpt": 1.35,  # "much higher than that of CAPE-TICKPT and MPI (around 35%)"
    "text": [
        "Fig. 9 (MAMULT 800x800 .. 6400x6400, 16 nodes): \"the execution time of CAPE-DICKPT is much higher "
        "than that of CAPE-TICKPT and MPI (around 35%) while the execution time of CAPE-TICKPT and MPI are "
        "roughly equal.\"",
        "Fig. 10 (6400x6400 on 4, 8, 16 nodes): \"the smaller the number of nodes is, the higher the "
        "difference\"; CAPE-DICKPT's master does not compute (\"on 4-node cluster, it is only 75% of the "
        "nodes involved in the computation phase in CAPE-DICKPT\").",
        "Fig. 11 (VECTOR, N = M = 2000 .. 14000, 16 nodes): \"the checkpoint size of CAPE-TICKPT is always "
        "smaller than that of CAPE-DICKPT in all measures\" (size after merging at the master); the values "
        "are in the figure only.",
    ],
    "vector_sizes": [2000, 4000, 6000, 8000, 10000, 12000, 14000],
}

# 000_2e1115959baa0e7d.txt Table 1, as printed (seconds). g = (1 - d/e) * 100, h = f/d.
TABLE1 = {
    "cite": "000_2e1115959baa0e7d.txt Table 1, Sect. 4",
    "rows": [  # nodes, size, threads, CAPE d, MPI e, OpenMP f, g (%), h
        (16, 9600, 1, 2776, 2496, 32556, -11, 11.73),
        (16, 9600, 2, 1695, 1397, 17401, -21, 10.27),
        (16, 6400, 1, 710, 644, 9292, -10, 13.09),
        (16, 9600, 2, 458, 396, 4919, -16, 10.74),
        (8, 9600, 1, 4791, 4501, 34991, -6, 7.30),
        (8, 9600, 2, 2454, 2368, 17942, -4, 7.31),
        (8, 9600, 3, 1890, 1698, 13011, -11, 6.88),
        (8, 9600, 4, 1514, 1366, 10243, -11, 6.77),
        (8, 6400, 1, 993, 955, 7147, -4, 7.20),
        (8, 6400, 2, 591, 589, 4488, 0, 7.59),
        (8, 6400, 3, 441, 440, 3386, 0, 7.68),
        (8, 6400, 4, 374, 365, 2653, -2, 7.09),
    ],
    "averages": {16: (-15, 11.46), 8: (-5, 7.23)},
    "notes": [
        "The fourth row is printed as 9600 but its times (458 s with 2 threads against 1695 s in row 2) "
        "fit 6400; transcribed as printed.",
        "OpenMP ran on one node with a quad-core CPU (Sect. 4: \"compared to running OpenMP on one node (a "
        "machine with a quad-core CPU)\"); columns g and h as the paper defines them: g = (1 - d/e) x 100, "
        "h = f/d.",
        "The paper's g column is printed with the sign of (e - d)/e; recomputing (1 - d/e) x 100 from d and "
        "e gives the same values (e.g. 1 - 2776/2496 = -11%).",
    ],
    "amdahl": [  # equation, p, s, S_latency
        ("eq. 2: 8 single-threaded nodes", 1.0, 8, 8.0),
        ("eq. 3: 8 nodes x 2 threads", 1.0, 16, 16.0),
    ],
    "text": "MPI is better than CAPE by \"a relatively stable ratio ranging from 2% to 21%\"; with two "
            "threads the speedups of CAPE and MPI are \"1.90 to 1.95 times\" (Sect. 4).",
}

# The monitor's cost.
MONITOR_COST = {
    "cite": "001_3036025dc34c4021.txt Sect. IV.C (citing its ref. [14]); 000_2e1115959baa0e7d.txt Sect. 4",
    "low": 0.02,
    "high": 0.20,
    "text": [
        "001 Sect. IV.C: the difference in tc between CAPE and MPI is \"the cost of monitoring and "
        "generating DICKPT ... According to [14], the time difference is in the 2% to 20%.\"",
        "003 Sect. III.A: write tracking by read-only pages and SIGSEGV, one fault per first write of a "
        "page (what cape's mprotect tracker does; uffd and full are cape's own).",
    ],
}
