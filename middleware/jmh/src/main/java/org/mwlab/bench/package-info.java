/** JMH benchmarks of the middleware's hot paths. */
package org.mwlab.bench;
