// The one Boost.Math policy the statistics use. Our wrappers check their arguments first and throw
// std::invalid_argument as before, so a domain error that reaches Boost is a bug and still throws;
// a quantile beyond double's range is ±infinity, where the default would throw std::overflow_error.
#pragma once
#include <boost/math/policies/policy.hpp>

namespace offloadbench {

using MathPolicy = boost::math::policies::policy<
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>>;

}  // namespace offloadbench
