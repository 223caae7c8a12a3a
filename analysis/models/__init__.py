"""The models every study uses, written once: open queues (M/M/1, M/M/m), busy periods,
exact MVA of closed networks and its bounds, 2^k·r factorial designs, the interactive law with
a modified N, link-capacity bounds, gamma fits of response times and ideal linear scaling."""
