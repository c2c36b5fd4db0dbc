package com.acme.notify;

import org.apache.rocketmq.spring.annotation.RocketMQMessageListener;
import org.apache.rocketmq.spring.core.RocketMQListener;
import org.springframework.stereotype.Component;

/** Sends alerts for large payments -- reusing the risk team's group with a tag filter. */
@Component
@RocketMQMessageListener(consumerGroup = "GID_RISK", topic = "TOPIC_PAYMENT", selectorExpression = "paid")
public class RiskAlerts implements RocketMQListener<String> {
    @Override
    public void onMessage(String message) {
        System.out.println("alert " + message);
    }
}
